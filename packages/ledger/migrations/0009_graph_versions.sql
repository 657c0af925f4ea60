-- 0009_graph_versions.sql
-- Graph versions. A job records the version of its graph that admission chose (`graph_version`;
-- NULL for rows admitted before this migration or through a path that names none: any worker
-- serving the graph may run those). Workers announce the (graph, version) pairs they serve in
-- `workers.info` (register_worker.sql), and a claim is refused to a worker that does not serve the
-- job's pair (claim_lease.sql). Append-only like 0001–0008; a nullable column without a default
-- rewrites nothing.
ALTER TABLE jobs ADD COLUMN graph_version text;

-- The key a worker announces and a claim compares: `<graph>@<version>`, `<graph>@*` for a job with
-- no version (graph names never contain `@`: the producer's graph ids are identifiers).
CREATE FUNCTION graph_version_key(graph text, version text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT graph || '@' || coalesce(version, '*') $$;

-- True when a live worker serves the key: it announced what it serves, heartbeated within the
-- last 5 s (heartbeats run at least every second) and has not said it stopped
-- (retire_worker.sql). Readers show a waiting job's reason from it.
CREATE FUNCTION graph_version_served(graph text, version text) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$ SELECT EXISTS (SELECT 1 FROM workers w
                        WHERE w.last_seen_at > now() - interval '5 seconds'
                          AND NOT (w.info ? 'stoppedAt')
                          AND w.info -> 'serves' ? graph_version_key(graph, version)) $$;

-- Whether the reconciler should deliver a job of this graph and version: a live worker serves
-- it, or no live worker announces anything (a queue consumer of an older release, or none yet:
-- the delivery then waits in the queue as before). A job nobody live serves gets no delivery, so
-- it waits without being claimed, refused and delivered again in a loop.
CREATE FUNCTION graph_version_deliverable(graph text, version text) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$ SELECT graph_version_served(graph, version)
            OR NOT EXISTS (SELECT 1 FROM workers w
                            WHERE w.last_seen_at > now() - interval '5 seconds'
                              AND NOT (w.info ? 'stoppedAt') AND w.info ? 'serves') $$;
