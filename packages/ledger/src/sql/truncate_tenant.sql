-- truncate_tenant.sql
-- The test hook POST /internal/truncate (RUNLEDGER_TEST_HOOKS=1 only): deletes what one tenant
-- has in this schema, by part. Runs: its jobs with their events, effects and stream logs (a
-- worker still holding one finds its fenced writes refused). Threads: its LangGraph API threads.
-- Assistants: its stored assistants with their versions. Checkpoints: every LangGraph checkpoint
-- under its LangGraph thread ids (langgraph_thread_id: the bare id for `default`, `~<tenant>/…` otherwise).
-- Params: $1 tenant, $2 runs, $3 threads, $4 assistants, $5 checkpoints (booleans)
-- Returns: one row: jobs, threads, assistants, checkpoints (rows deleted).
WITH jobs_gone AS (
  DELETE FROM jobs WHERE $2 AND tenant = $1 RETURNING job_id
), events_gone AS (
  DELETE FROM job_events e USING jobs_gone j WHERE e.job_id = j.job_id RETURNING 1
), streams_gone AS (
  DELETE FROM run_stream_events s USING jobs_gone j WHERE s.job_id = j.job_id RETURNING 1
), threads_gone AS (
  DELETE FROM langgraph_threads WHERE $3 AND tenant = $1 RETURNING 1
), assistants_gone AS (
  DELETE FROM assistants WHERE $4 AND tenant = $1 RETURNING 1
), cp AS (
  DELETE FROM checkpoints
   WHERE $5 AND CASE WHEN $1 = 'default' THEN NOT starts_with(thread_id, '~') ELSE starts_with(thread_id, '~' || $1 || '/') END
  RETURNING 1
), bl AS (
  DELETE FROM checkpoint_blobs
   WHERE $5 AND CASE WHEN $1 = 'default' THEN NOT starts_with(thread_id, '~') ELSE starts_with(thread_id, '~' || $1 || '/') END
  RETURNING 1
), wr AS (
  DELETE FROM checkpoint_writes
   WHERE $5 AND CASE WHEN $1 = 'default' THEN NOT starts_with(thread_id, '~') ELSE starts_with(thread_id, '~' || $1 || '/') END
  RETURNING 1
)
SELECT (SELECT count(*) FROM jobs_gone) AS jobs, (SELECT count(*) FROM threads_gone) AS threads,
       (SELECT count(*) FROM assistants_gone) AS assistants, (SELECT count(*) FROM cp) AS checkpoints,
       (SELECT count(*) FROM events_gone) + (SELECT count(*) FROM streams_gone) + (SELECT count(*) FROM bl) + (SELECT count(*) FROM wr) AS other_rows;
