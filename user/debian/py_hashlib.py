# hashlib, hmac, zlib, base64, struct, random with a seed, decimal.
import hashlib, hmac, zlib, base64, struct, random, decimal, fractions, math
data = b"The quick brown fox jumps over the lazy dog"
for name in ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "blake2b", "blake2s"]:
    print(name, hashlib.new(name, data).hexdigest())
h = hashlib.sha256()
for i in range(1000):
    h.update(str(i).encode())
print("incremental", h.hexdigest())
print("pbkdf2", hashlib.pbkdf2_hmac("sha256", b"password", b"salt", 1000).hex())
print("shake", hashlib.shake_128(data).hexdigest(16))
print("hmac", hmac.new(b"key", data, "sha256").hexdigest())
comp = zlib.compress(data * 100, 9)
print("zlib", len(comp), zlib.crc32(data), zlib.adler32(data), zlib.decompress(comp) == data * 100)
print("b64", base64.b64encode(data[:10]).decode(), base64.b32encode(b"xyz").decode())
print("struct", struct.pack("<IhQd", 1, -2, 3, 0.5).hex(), struct.unpack(">H", b"\x01\x02"))
rng = random.Random(1234)
print("random", [rng.randint(0, 100) for _ in range(5)], rng.random())
decimal.getcontext().prec = 40
print("decimal", decimal.Decimal(1) / decimal.Decimal(7))
print("fraction", fractions.Fraction(3, 4) + fractions.Fraction(5, 6))
print("math", math.factorial(30), math.isqrt(10**20 + 1), f"{math.exp(1):.15f}")
print("float", 0.1 + 0.2, 1e308 * 10, 2 ** 0.5, round(2.675, 2))
