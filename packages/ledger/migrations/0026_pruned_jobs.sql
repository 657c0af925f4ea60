-- 0026_pruned_jobs.sql
-- Retention deletes the job rows of pruned threads (delete_pruned_jobs.sql,
-- docs/decisions/0018-retention-deletes-jobs.md): it finds them by pruned_at. This partial index
-- holds only pruned rows, which retention deletes soon after marking them, so it stays small and
-- costs nothing on admission (a new row has no pruned_at). On a small ledger it is built here; on a
-- large one after the commit, CONCURRENTLY (below, as in 0012), so jobs keeps taking writes while
-- it builds. Append-only like the migrations before it.
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM jobs LIMIT 100000) x) < 100000 THEN
    CREATE INDEX jobs_pruned ON jobs (pruned_at) INCLUDE (tenant, thread_id, seq) WHERE pruned_at IS NOT NULL;
  END IF;
END
$$;

-- runledger:after-commit
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobs_pruned ON jobs (pruned_at) INCLUDE (tenant, thread_id, seq) WHERE pruned_at IS NOT NULL;
