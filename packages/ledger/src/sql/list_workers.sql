-- list_workers.sql
-- Every worker that ever heartbeated, with how long ago it was last seen (by the database clock).
-- Params: none
-- Returns: worker_id, started_at, last_seen_at, seen_ms_ago, info; most recently seen first.
SELECT worker_id, started_at, last_seen_at, info,
       (extract(epoch FROM now() - last_seen_at) * 1000)::bigint AS seen_ms_ago
  FROM workers
 ORDER BY last_seen_at DESC;
