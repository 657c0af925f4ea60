-- 0003_admission_writes.sql
-- Less work per job_events row, which every admission and every transition appends
-- (bench/admit-cost.ts: write amplification was most of an admission's server CPU and WAL).
-- Append-only like 0001 and 0002.

-- No foreign key to jobs: its check ran a `SELECT … FOR KEY SHARE` on the job row for every
-- event (a row lock: a WAL record and a dirtied heap page, even on the row the same statement
-- just inserted). Every event is written by a ledger statement that read or wrote its job row
-- in the same statement (admit_jobs, claim_lease, end_attempt, append_event, mark_enqueued,
-- operator_transition, expire_leases), and jobs rows are never deleted (a job row is the
-- permanent idempotency receipt; retention deletes events explicitly, prune_finished_threads.sql),
-- so the constraint guarded nothing the code can do. Deleting a job row by hand now leaves its
-- events behind: delete them with it.
ALTER TABLE job_events DROP CONSTRAINT job_events_job_id_fkey;

-- One index instead of two: nothing looks an event up by event_id alone, and every read of a
-- job's timeline goes by (job_id, event_id) (list_events.sql, recovery_times_by_bucket.sql).
-- The primary key moves to those columns (still unique: event_id alone is) and replaces
-- job_events_job.
ALTER TABLE job_events DROP CONSTRAINT job_events_pkey;
ALTER TABLE job_events ADD CONSTRAINT job_events_pkey PRIMARY KEY (job_id, event_id);
DROP INDEX job_events_job;
