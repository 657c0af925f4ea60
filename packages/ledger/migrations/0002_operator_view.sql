-- 0002_operator_view.sql
-- What the operator view (dashboard, metrics, traces, retention) needs from the ledger:
-- indexes for its filters and charts, the trace context of an admission, and the mark
-- retention leaves on a job whose history it removed. Append-only like 0001.

-- The trace context (W3C `traceparent`) of the admission, so every attempt of the job, on any
-- worker and after any redelivery, joins the admission's trace. NULL when tracing is off.
ALTER TABLE jobs ADD COLUMN trace_context text;
-- When retention removed this job's events and its thread's checkpoints; the row stays as the
-- permanent idempotency receipt.
ALTER TABLE jobs ADD COLUMN pruned_at timestamptz;

-- Dashboard filters, keyset-paged on seq like list_jobs.sql (status and tenant have theirs in 0001).
CREATE INDEX jobs_graph_seq ON jobs (graph, seq);
CREATE INDEX jobs_thread_seq ON jobs (thread_id, seq);
-- Retention candidates: finished jobs whose history is still there.
CREATE INDEX jobs_unpruned_completed ON jobs (completed_at) WHERE pruned_at IS NULL AND completed_at IS NOT NULL;
-- Charts: events of some types within a time window (transitions over time, recovery times),
-- read from the index alone.
CREATE INDEX job_events_type_at ON job_events (type, at) INCLUDE (job_id, event_id);
-- Recovery time: the first claim after a recovery_required event of the same job, index only.
CREATE INDEX job_events_claimed ON job_events (job_id, event_id) INCLUDE (at) WHERE type = 'claimed';
