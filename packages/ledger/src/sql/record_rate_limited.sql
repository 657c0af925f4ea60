-- record_rate_limited.sql
-- Tells why an accepted job waits in the queue: a `rate_limited` event naming its graph's limits
-- and what held the claim back, once per hold-back episode. An episode is an attempt: a held-back
-- claim is rolled back, so the job keeps its attempt through every retry until a claim passes,
-- and its timeline says it once however many times it was refused. Written for every refusal
-- that holds the job back: the window or the concurrency limit (`rate`, `concurrency`), and a
-- claim that gave up waiting for the graph's limit row behind other claims (`contention`).
-- Only while the job still waits: another delivery of it may have been claimed meanwhile (its
-- attempt moved on), and a running job was not held back.
-- Params: $1 job_id, $2 reason (text). Run after lock_rate_limited_event.sql in one transaction.
-- Returns: the job's status (the caller answers as a claim would when it no longer waits); the
-- event is not written when the graph has no limit any more, the job no longer waits, or the
-- episode has its event.
WITH j AS (SELECT job_id, graph, status, attempt, fencing_token FROM jobs WHERE job_id = $1), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT j.job_id, 'rate_limited', j.attempt, j.fencing_token,
         jsonb_build_object('graph', l.graph, 'reason', $2::text, 'maxPerInterval', l.max_per_interval,
                            'intervalMs', l.interval_ms, 'maxConcurrent', l.max_concurrent)
    FROM j JOIN graph_limits l ON l.graph = j.graph
   WHERE j.status IN ('accepted', 'recovery_required')
     AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.job_id AND e.type = 'rate_limited' AND e.attempt = j.attempt)
)
SELECT status FROM j;
