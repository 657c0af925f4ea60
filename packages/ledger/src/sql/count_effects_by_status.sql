-- count_effects_by_status.sql
-- Effects per status over the whole ledger (a metrics gauge; pending ones need a person or a retry).
-- Params: none
-- Returns: status, count.
SELECT status, count(*)::bigint AS count FROM effects GROUP BY status;
