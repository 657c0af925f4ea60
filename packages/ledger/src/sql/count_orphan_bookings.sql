-- count_orphan_bookings.sql
-- Demo-provider bookings made for a job the ledger never admitted (chaos audit, ARCHITECTURE.md, invariant 2).
-- Params: none
-- Returns: one row: count, sample (up to 5 job ids).
SELECT count(*)::bigint AS count, (array_agg(DISTINCT b.job_id))[1:5] AS sample
  FROM example_bookings b
 WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.job_id = b.job_id);
