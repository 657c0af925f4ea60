-- lock_event_minutes.sql
-- Waits for the transaction advisory lock that roll_up_event_minutes.sql and
-- backfill_event_minutes.sql try (one per schema), so the next statement of the transaction sees
-- every minute they counted and none is counted meanwhile.
-- Params: none
-- Returns: one row (nothing of interest).
SELECT pg_advisory_xact_lock(hashtextextended('runledger.event_minutes:' || current_schema(), 0));
