-- register_worker.sql
-- A worker announces itself at start: what it serves (`info.serves`: graph_version_key of each
-- (graph, version) pair and `<graph>@*`; `info.versions`, `info.resumes`, `info.concurrency` per
-- graph) replaces whatever an earlier process of the same worker id announced.
-- Params: $1 worker_id, $2 info (jsonb)
-- Returns: nothing.
INSERT INTO workers (worker_id, info) VALUES ($1, $2)
ON CONFLICT (worker_id) DO UPDATE SET info = $2, started_at = now(), last_seen_at = now();
