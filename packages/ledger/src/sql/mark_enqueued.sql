-- mark_enqueued.sql
-- Records that a delivery was handed to the queue. The `deliveries` compare-and-set makes
-- concurrent reconcilers agree: only the one that moved the counter writes the event.
-- Params: $1 job_id, $2 deliveries seen by the caller, $3 delivery id
-- Returns: one row when this caller recorded the delivery.
WITH upd AS (
  UPDATE jobs SET enqueued_at = now(), deliveries = deliveries + 1, delivery_id = $3, updated_at = now()
   WHERE job_id = $1 AND deliveries = $2
  RETURNING job_id, attempt, fencing_token
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'enqueued', attempt, fencing_token, jsonb_build_object('deliveryId', $3::text) FROM upd
)
SELECT job_id FROM upd;
