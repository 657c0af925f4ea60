-- check_graph_limit.sql
-- After a claim in the same transaction (the limit row locked first): whether it stays within
-- its graph's limits. Counted against now(), the transaction's start, which is no later than
-- the `claimed` event this claim wrote, so the limit holds for the ledger's event times.
-- Params: $1 graph, $2 job_id (the job just claimed; not counted as running)
-- Returns: allowed, retry_in_ms (when refused: until the window has room, or 250 ms for the
-- concurrency limit), waiting (accepted jobs of the graph, to spread their retries), reason.
WITH l AS (SELECT * FROM graph_limits WHERE graph = $1),
c AS (
  SELECT (SELECT count(*) FROM jobs WHERE graph = $1 AND job_id <> $2 AND status IN ('starting', 'running') AND lease_expires_at > now()) AS running,
         (SELECT count(*) FROM l, unnest(l.recent_claims) t WHERE t > now() - make_interval(secs => l.interval_ms / 1000.0)) AS recent,
         (SELECT min(t) FROM l, unnest(l.recent_claims) t WHERE t > now() - make_interval(secs => l.interval_ms / 1000.0)) AS oldest
)
SELECT CASE WHEN l.max_concurrent IS NOT NULL AND c.running >= l.max_concurrent THEN 'concurrency'
            WHEN l.max_per_interval IS NOT NULL AND c.recent >= l.max_per_interval THEN 'rate' END AS reason,
       greatest(1, ceil(extract(epoch FROM (c.oldest + make_interval(secs => l.interval_ms / 1000.0) - clock_timestamp())) * 1000))::bigint AS rate_retry_ms,
       (SELECT count(*) FROM jobs WHERE graph = $1 AND status = 'accepted')::int AS waiting,
       l.max_per_interval, l.interval_ms, l.max_concurrent
  FROM l, c;
