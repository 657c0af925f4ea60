-- count_jobs_by_status.sql
-- Jobs per status, exact, from ledger_counts (kept by triggers on jobs in the writing
-- transaction, migration 0012): the cost follows the counter rows written since the last fold
-- (fold_ledger_counts.sql, every reconciler sweep), not the number of jobs.
-- Params: $1 tenant (null = any)
-- Returns: status, count (statuses with no jobs are absent).
SELECT status, sum(n)::bigint AS count FROM ledger_counts
 WHERE kind = 'jobs' AND ($1::text IS NULL OR tenant = $1)
 GROUP BY status HAVING sum(n) <> 0;
