-- append_stream_events.sql
-- Appends stream chunks of a run for the current lease holder, in order. The fence share-locks
-- the job row while this token holds it, so a claim that takes the lease waits for this insert
-- and every later chunk of the old attempt finds no row: nothing is written for a stale token.
-- Params: $1 job_id, $2 fencing_token, $3 events (text[]), $4 data (jsonb[], same length)
-- Returns: one row per chunk written (none when the lease was lost).
INSERT INTO run_stream_events (job_id, attempt, fencing_token, event, data)
SELECT fence.job_id, fence.attempt, fence.fencing_token, chunk.event, chunk.data
  FROM (SELECT job_id, attempt, fencing_token
          FROM jobs
         -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
         WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
           AND lease_expires_at > clock_timestamp()
           FOR SHARE) AS fence
 CROSS JOIN unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS chunk(event, data, n)
 ORDER BY chunk.n
RETURNING event_id;
