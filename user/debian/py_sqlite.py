# sqlite3 module on a database file.
import sqlite3
con = sqlite3.connect("py.db")
con.execute("PRAGMA journal_mode=WAL")
con.execute("CREATE TABLE IF NOT EXISTS kv(k TEXT PRIMARY KEY, v INTEGER)")
with con:
    con.executemany("INSERT OR REPLACE INTO kv VALUES (?, ?)", [(f"key{i:04d}", i * i) for i in range(1000)])
try:
    with con:
        con.execute("INSERT INTO kv VALUES ('key0001', 0)")
except sqlite3.IntegrityError as e:
    print("integrity:", e)
print(con.execute("SELECT count(*), sum(v), max(k) FROM kv").fetchone())
con.create_function("rev", 1, lambda s: s[::-1])
print(con.execute("SELECT rev(k) FROM kv ORDER BY v DESC LIMIT 2").fetchall())
con.row_factory = sqlite3.Row
row = con.execute("SELECT k, v FROM kv WHERE v = ?", (49,)).fetchone()
print(dict(row))
con.close()
con2 = sqlite3.connect("py.db")
print(con2.execute("SELECT count(*) FROM kv WHERE v % 2 = 0").fetchone()[0])
mem = sqlite3.connect(":memory:")
mem.execute("CREATE TABLE t(x)")
mem.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
print(mem.execute("SELECT avg(x), group_concat(x) FROM (SELECT x FROM t WHERE x < 5)").fetchone())
mem.commit()
con2.backup(mem)
print(mem.execute("SELECT count(*) FROM kv").fetchone())
print(sqlite3.sqlite_version_info >= (3, 0, 0))
