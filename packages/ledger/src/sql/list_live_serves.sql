-- list_live_serves.sql
-- What the live workers serve, as graph_version_served (0009) judges a worker live: announced,
-- seen within 5 s, not stopped. The producer reads it once a second to warn an admission that no
-- live worker serves its graph and version.
-- Params: none
-- Returns: one row per graph_version_key served (`vacation@1.0.0`, `vacation@*`); none when no live worker announced anything.
SELECT DISTINCT jsonb_array_elements_text(w.info -> 'serves') AS key
  FROM workers w
 WHERE w.last_seen_at > now() - interval '5 seconds'
   AND NOT (w.info ? 'stoppedAt')
   AND jsonb_typeof(w.info -> 'serves') = 'array';
