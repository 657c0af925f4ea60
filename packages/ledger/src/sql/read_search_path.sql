-- read_search_path.sql
-- The connection's search_path, the schema it resolves to first, and the marker that
-- set_local_search_path.sql leaves. Read before an admission in a caller's transaction to
-- remember the path, and after the switch to check it held (outside a transaction a SET LOCAL
-- lasts for its own statement only, so the marker is gone by then).
-- Params: none
-- Returns: search_path, current_schema (null when no schema on the path exists), marker.
SELECT current_setting('search_path') AS search_path,
       current_schema() AS current_schema,
       current_setting('runledger.in_transaction', true) AS marker;
