-- 0008_langgraph_api.sql
-- The LangGraph Server API's own records: threads created before any run (a tenant's, with
-- metadata), and the per-run stream log that SSE clients replay (the LangGraph Server API routes of the producer).

-- A thread is its tenant's (like jobs, see 0005): two tenants may use the same id, each for its own.
CREATE TABLE langgraph_threads (
  thread_id  text NOT NULL,
  tenant     text NOT NULL,
  metadata   jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, thread_id)
);
CREATE INDEX langgraph_threads_tenant ON langgraph_threads (tenant, created_at DESC);

-- One row per stream chunk of a run (job) that a client asked to stream. event_id comes from one
-- sequence and rows are written under the attempt's fencing token (FOR SHARE on the job row), so a
-- run's ids rise in commit order and a stale attempt's rows never follow the new attempt's.
CREATE TABLE run_stream_events (
  job_id        text NOT NULL,
  event_id      bigint GENERATED ALWAYS AS IDENTITY,
  attempt       integer NOT NULL,
  fencing_token bigint NOT NULL,
  event         text NOT NULL,
  data          jsonb,
  at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (job_id, event_id)
);
