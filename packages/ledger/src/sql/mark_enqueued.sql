-- mark_enqueued.sql
-- Records further deliveries handed to the queue (redeliveries, resumes, replays; an
-- admission's own first delivery is issued by admit_jobs.sql), many jobs in one statement. The
-- `deliveries` compare-and-set makes concurrent reconcilers agree: only the caller that moved
-- a job's counter writes its `enqueued` event.
-- Params: $1 job_ids (text[]), $2 deliveries seen by the caller (int[]), $3 delivery ids (text[])
-- Returns: the job ids this caller recorded.
WITH m AS (
  SELECT * FROM unnest($1::text[], $2::int[], $3::text[]) AS m(job_id, deliveries, delivery_id)
), upd AS (
  UPDATE jobs j
     SET enqueued_at = now(), deliveries = j.deliveries + 1, delivery_id = m.delivery_id, updated_at = now()
    FROM m
   WHERE j.job_id = m.job_id AND j.deliveries = m.deliveries
  RETURNING j.job_id, j.attempt, j.fencing_token, m.delivery_id
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'enqueued', attempt, fencing_token, jsonb_build_object('deliveryId', delivery_id) FROM upd
)
SELECT job_id FROM upd;
