-- claim_webhook_deliveries.sql
-- Claims up to $1 due webhook deliveries for one sending pass. SKIP LOCKED: producers claiming at
-- once each get other rows. The claim counts the attempt and moves due_at past the send's time
-- limit ($2), so no other producer takes the row while it is being sent; a producer that dies
-- mid-send leaves it due again then (at least once: the receiver drops a repeat by its id).
-- Params: $1 most rows, $2 claim time (ms: the send's time limit plus a margin)
-- Returns: per row webhook_delivery_id (jobs has a delivery_id of its own: the queue's), run_status, run_ended_at, delivery_attempt, then the job's row (its sealed webhook included).
WITH due AS (
  SELECT delivery_id FROM webhook_deliveries
   WHERE state = 'pending' AND due_at <= now()
   ORDER BY due_at
   LIMIT $1
   FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE webhook_deliveries d
     SET attempts = d.attempts + 1, due_at = now() + make_interval(secs => $2::float8 / 1000)
    FROM due
   WHERE d.delivery_id = due.delivery_id
  RETURNING d.delivery_id, d.job_id, d.run_status, d.ended_at, d.attempts
)
SELECT c.delivery_id AS webhook_delivery_id, c.run_status, c.ended_at AS run_ended_at, c.attempts AS delivery_attempt, j.*
  FROM claimed c JOIN jobs j ON j.job_id = c.job_id;
