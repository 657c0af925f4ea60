-- seed_ledger_counts.sql
-- Once after migration 0012: adds the jobs and effects that existed before its counting triggers
-- to ledger_counts, without locking jobs. One statement, one snapshot: the rows counted include
-- every change committed since the triggers, and those changes' counter rows are in the same
-- snapshot, so the seed is the count minus them (the state the triggers started from).
-- Does nothing once seeded (the 'unseeded' marker is gone).
-- Params: none
-- Returns: one row per counter row added (kind, status, n).
WITH marker AS (
  DELETE FROM ledger_counts WHERE kind = 'unseeded' RETURNING 1
), seen AS (
  SELECT 'jobs' AS kind, tenant, status, count(*) AS n FROM jobs GROUP BY tenant, status
  UNION ALL
  SELECT 'effects', '', status, count(*) FROM effects GROUP BY status
  UNION ALL
  SELECT kind, tenant, status, -sum(n) FROM ledger_counts WHERE kind IN ('jobs', 'effects') GROUP BY kind, tenant, status
)
INSERT INTO ledger_counts (kind, tenant, status, n)
SELECT kind, tenant, status, sum(n) FROM seen
 WHERE EXISTS (SELECT 1 FROM marker)
 GROUP BY kind, tenant, status HAVING sum(n) <> 0
RETURNING kind, status, n;
