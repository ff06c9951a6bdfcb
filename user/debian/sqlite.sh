# sqlite3 with a database file: schema, transactions, indexes, joins,
# aggregates, WAL, reopen.
set -e
db=test.db
rm -f "$db"
sqlite3 "$db" <<'SQL'
PRAGMA journal_mode=WAL;
CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE book(id INTEGER PRIMARY KEY, author INTEGER REFERENCES author(id), title TEXT, year INT, pages INT);
CREATE INDEX book_year ON book(year);
BEGIN;
INSERT INTO author(name) VALUES ('Austen'), ('Tolstoy'), ('Woolf'), ('Kafka');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO book(author, title, year, pages) SELECT (i % 4) + 1, 'Book ' || i, 1800 + (i * 37) % 150, 100 + (i * 53) % 900 FROM n;
COMMIT;
SQL
sqlite3 "$db" 'PRAGMA journal_mode;'
sqlite3 "$db" "SELECT a.name, count(*), sum(b.pages), min(b.year), max(b.year) FROM book b JOIN author a ON a.id = b.author GROUP BY a.name ORDER BY a.name;"
sqlite3 "$db" "SELECT count(*) FROM book WHERE year BETWEEN 1850 AND 1860;"
sqlite3 "$db" "EXPLAIN QUERY PLAN SELECT * FROM book WHERE year = 1900;" | sed 's/^[0-9|]*//' | grep -o 'USING INDEX book_year' || true
sqlite3 "$db" "BEGIN; DELETE FROM book WHERE pages > 900; ROLLBACK; SELECT count(*) FROM book;"
sqlite3 "$db" "UPDATE book SET pages = pages + 1 WHERE id % 10 = 0; SELECT total(pages) FROM book;"
sqlite3 -header -column "$db" "SELECT id, title, year FROM book ORDER BY year DESC, id LIMIT 3;"
sqlite3 -csv "$db" "SELECT name, length(name), upper(name), hex(name) FROM author ORDER BY id;"
sqlite3 "$db" "SELECT printf('%.2f', avg(pages)), group_concat(DISTINCT year % 10) FROM (SELECT * FROM book ORDER BY year % 10);"
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null
sqlite3 "$db" "PRAGMA integrity_check; VACUUM; PRAGMA integrity_check;"
sqlite3 "$db" ".dump author" | head -5
sqlite3 "$db" ".tables"
ls "$db"* | sort
sqlite3 "$db" "SELECT json_object('n', count(*), 'max', max(pages)) FROM book;"
