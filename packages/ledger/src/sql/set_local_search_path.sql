-- set_local_search_path.sql
-- Sets search_path for the rest of the current transaction only (SET LOCAL), so a caller's
-- own client runs the ledger's unqualified statements in the ledger schema, and leaves a
-- transaction-local marker that read_search_path.sql checks. The path is a parameter, never
-- interpolated into the statement text.
-- Params: $1 search_path (e.g. 'runledger, public')
-- Returns: the new search_path.
SELECT set_config('search_path', $1, true) AS search_path, set_config('runledger.in_transaction', 'yes', true) AS marker;
