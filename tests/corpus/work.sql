-- sqlite3's workload for the corpus: a recursive CTE, an index, a join and
-- a sort, in memory.
CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)
INSERT INTO t SELECT x, (x * 7919) % 10007, printf('value %d', x * 31) FROM c;
CREATE INDEX t_k ON t (k);
SELECT count(*), sum(length(a.v)) FROM t a JOIN t b ON a.k = b.k AND a.id < b.id WHERE a.id % 7 = 0;
SELECT v FROM t ORDER BY v DESC LIMIT 1;
SELECT k, count(*) FROM t GROUP BY k ORDER BY 2 DESC LIMIT 1;
