-- server_version.sql
-- The PostgreSQL server's version, for `runledger doctor`.
-- Params: none
-- Returns: one row: version (e.g. '16.4'), version_num (e.g. 160004).
SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS version_num;
