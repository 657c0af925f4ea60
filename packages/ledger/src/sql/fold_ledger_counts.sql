-- fold_ledger_counts.sql
-- Folds the counter rows the jobs and effects triggers appended (migration 0012) into one row
-- per (kind, tenant, status), so reading the counts stays cheap; writes nothing when there is
-- nothing to fold (an idle ledger). Concurrent callers are
-- serialised by a transaction advisory lock: one that does not get it folds nothing. Readers
-- see the same sums before and after (one statement, one snapshot).
-- Params: none
-- Returns: one row: folded (counter rows replaced).
WITH needed AS (
  SELECT count(*) > count(DISTINCT (kind, tenant, status)) AS yes FROM ledger_counts WHERE kind IN ('jobs', 'effects')
), lock AS (
  SELECT (SELECT yes FROM needed) AND pg_try_advisory_xact_lock(hashtextextended('runledger.ledger_counts', 0)) AS ok
), gone AS (
  DELETE FROM ledger_counts WHERE kind IN ('jobs', 'effects') AND (SELECT ok FROM lock)
  RETURNING kind, tenant, status, n
), folded AS (
  INSERT INTO ledger_counts (kind, tenant, status, n)
  SELECT kind, tenant, status, sum(n) FROM gone GROUP BY kind, tenant, status HAVING sum(n) <> 0
)
SELECT count(*)::bigint AS folded FROM gone;
