-- retire_worker.sql
-- A worker that stopped (graceful drain) says so, so its graphs and versions stop counting as
-- served at once rather than 5 s after its last heartbeat (graph_version_served).
-- Params: $1 worker_id
-- Returns: nothing.
UPDATE workers SET info = info || jsonb_build_object('stoppedAt', now()) WHERE worker_id = $1;
