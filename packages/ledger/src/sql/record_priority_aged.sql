-- record_priority_aged.sql
-- After the aging pass raised jobs' deliveries to the front of the queue: their priority becomes
-- 0 (what every later delivery carries: a redelivery, a hand-off, a queue rebuilt after a flush)
-- and each gets a `priority_aged` event with the priority it had and how long it had waited. Only
-- jobs still prioritized change, so two passes that raced record each job once.
-- Params: $1 job_ids (text[]), $2 their priorities before (int[]), $3 aging bound (ms)
-- Returns: the job ids recorded.
WITH m AS (
  SELECT * FROM unnest($1::text[], $2::int[]) AS m(job_id, was)
), aged AS (
  UPDATE jobs j SET priority = 0, updated_at = now()
    FROM m
   WHERE j.job_id = m.job_id AND j.priority > 0
  RETURNING j.job_id, m.was, j.attempt, j.fencing_token,
            greatest(coalesce(j.enqueued_at, j.accepted_at), j.run_after) AS waiting_since
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'priority_aged', attempt, fencing_token,
         jsonb_build_object('priority', was, 'agingMs', $3::bigint,
                            'waitedMs', round(extract(epoch FROM (now() - waiting_since)) * 1000)::bigint)
    FROM aged
)
SELECT job_id FROM aged;
