-- append_stream_events.sql
-- Appends stream chunks of a run for the current lease holder, in order, numbered on from the
-- run's last `seq` (0 for its first chunk). A later attempt's first chunk skips one number: the
-- producer may have ended a stream of the earlier attempt with an `error` event of that number
-- (a run stopped for manual reconciliation, then replayed), and a client that saw it must still
-- get every chunk after it. The fence share-locks the job row while this token holds it, so a
-- claim that takes the lease waits for this insert and every later chunk of the old attempt finds
-- no row: nothing is written for a stale token, and the new attempt numbers on from every chunk
-- the old one committed.
-- Params: $1 job_id, $2 fencing_token, $3 events (text[]), $4 data (jsonb[], same length)
-- Returns: one row per chunk written, its seq (none when the lease was lost).
INSERT INTO run_stream_events (job_id, attempt, fencing_token, seq, event, data)
SELECT fence.job_id, fence.attempt, fence.fencing_token, coalesce(prev.next, 0) + chunk.n - 1, chunk.event, chunk.data
  FROM (SELECT job_id, attempt, fencing_token
          FROM jobs
         -- `(status …) IS TRUE` keeps the lookup on the key (docs/decisions/0005-cost-at-scale.md, "A job's own statements find it by key").
         WHERE job_id = $1 AND fencing_token = $2 AND (status IN ('starting', 'running')) IS TRUE
           AND lease_expires_at > clock_timestamp()
           FOR SHARE) AS fence
 LEFT JOIN LATERAL (SELECT s.seq + CASE WHEN s.attempt = fence.attempt THEN 1 ELSE 2 END AS next
                      FROM run_stream_events s
                     WHERE s.job_id = fence.job_id
                     ORDER BY s.seq DESC
                     LIMIT 1) AS prev ON true
 CROSS JOIN unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS chunk(event, data, n)
 ORDER BY chunk.n
RETURNING seq;
