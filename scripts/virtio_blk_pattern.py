#!/usr/bin/env python3
"""Pattern images for user/tests/virtio_blk_pattern.c.

  virtio_blk_pattern.py make IMG   16 MiB image: a marker in sector 0, the
                                   host pattern up to 8 MiB, written with dd
  virtio_blk_pattern.py check IMG  after the test ran in Trellis: the guest
                                   pattern is at 8..10 MiB, the rest intact
"""
import os
import subprocess
import sys
import tempfile

MARKER = b"TRELLIS-VIRTIO-PATTERN\n"
MIB = 1 << 20


def host_byte_block(start, n):
    return bytes(((i >> 9) * 131 + (i & 511) * 7 + 3) & 0xFF for i in range(start, start + n))


def guest_byte_block(start, n):
    return bytes(((i >> 9) * 17 + (i & 511) * 13 + 5) & 0xFF for i in range(start, start + n))


def make(img):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(MARKER.ljust(4096, b"\0"))
        f.write(host_byte_block(4096, 8 * MIB - 4096))
        pattern = f.name
    with open(img, "wb") as f:
        f.truncate(16 * MIB)
    subprocess.run(["dd", f"if={pattern}", f"of={img}", "bs=1M", "conv=notrunc,fsync", "status=none"], check=True)
    os.unlink(pattern)


def check(img):
    data = open(img, "rb").read()
    ok = True
    if data[:len(MARKER)] != MARKER:
        print("marker lost"); ok = False
    if data[4096:8 * MIB] != host_byte_block(4096, 8 * MIB - 4096):
        print("host pattern changed"); ok = False
    want = guest_byte_block(8 * MIB, 2 * MIB)
    got = data[8 * MIB:10 * MIB]
    bad = sum(1 for a, b in zip(got, want) if a != b)
    print(f"guest pattern at 8..10 MiB: {len(want) - bad} of {len(want)} bytes match")
    ok &= bad == 0
    if any(data[10 * MIB:]):
        print("bytes past 10 MiB changed"); ok = False
    print("image check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "check"):
        sys.exit(__doc__)
    sys.exit(make(sys.argv[2]) if sys.argv[1] == "make" else check(sys.argv[2]))
