-- set_local_lock_timeout.sql
-- Bounds how long this transaction waits for a lock (claimLimited: the graph's limit row).
-- Params: $1 timeout (text, e.g. '1s')
-- Returns: the setting.
SELECT set_config('lock_timeout', $1, true);
