-- record_graph_claim.sql
-- Remembers a claim of a limited graph (the limit row is locked by this transaction): its time
-- by clock_timestamp(), no earlier than its `claimed` event, and only the claims still inside
-- the window, so the array never holds more than max_per_interval entries.
-- Params: $1 graph
-- Returns: nothing.
UPDATE graph_limits
   SET recent_claims = array_append(
         ARRAY(SELECT t FROM unnest(recent_claims) t WHERE t > clock_timestamp() - make_interval(secs => coalesce(interval_ms, 0) / 1000.0) ORDER BY t),
         clock_timestamp()),
       updated_at = now()
 WHERE graph = $1;
