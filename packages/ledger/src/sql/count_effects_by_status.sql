-- count_effects_by_status.sql
-- Effects per status over the whole ledger (a metrics gauge; pending ones need a person or a
-- retry), exact, from ledger_counts (kept by triggers on effects, migration 0012).
-- Params: none
-- Returns: status, count (statuses with no effects are absent).
SELECT status, sum(n)::bigint AS count FROM ledger_counts WHERE kind = 'effects' GROUP BY status HAVING sum(n) <> 0;
