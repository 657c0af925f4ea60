-- record_webhook_attempt.sql
-- Records one attempt of a webhook delivery and its answer, and settles the delivery: delivered
-- on a 2xx; else due again after the backoff ($6), or gave_up when that would pass the retry
-- window ($7, counted from the run's end). Only the claim that made attempt $2 settles the row
-- (`held`): a producer whose claim ran out (another one re-claimed it) only adds its answer.
-- Params: $1 delivery_id, $2 attempt, $3 status_code (null: no answer), $4 error (null on an answer),
--         $5 delivered (boolean), $6 backoff before the next attempt (ms), $7 retry window (ms)
-- Returns: the delivery's new state when this claim settled it; no row when another claim holds it.
WITH cur AS (
  SELECT delivery_id, attempts = $2 AND state = 'pending' AS held,
         now() + make_interval(secs => $6::float8 / 1000) AS next_due,
         now() + make_interval(secs => $6::float8 / 1000) > ended_at + make_interval(secs => $7::float8 / 1000) AS past_window
    FROM webhook_deliveries WHERE delivery_id = $1
     FOR UPDATE
), upd AS (
  UPDATE webhook_deliveries d
     SET answers = d.answers || jsonb_build_array(jsonb_build_object('attempt', $2::int, 'at', now(), 'statusCode', $3::int, 'error', $4::text)),
         state = CASE WHEN NOT cur.held THEN d.state WHEN $5 THEN 'delivered' WHEN cur.past_window THEN 'gave_up' ELSE 'pending' END,
         due_at = CASE WHEN cur.held AND NOT $5 THEN cur.next_due ELSE d.due_at END,
         settled_at = CASE WHEN cur.held AND ($5 OR cur.past_window) THEN now() ELSE d.settled_at END
    FROM cur
   WHERE d.delivery_id = cur.delivery_id
  RETURNING d.state, cur.held
)
SELECT state FROM upd WHERE held;
