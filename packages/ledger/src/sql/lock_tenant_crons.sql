-- lock_tenant_crons.sql
-- Serialises cron creations of one tenant until the transaction ends, so two at once cannot both
-- pass the per-tenant cap in insert_cron.sql.
-- Params: $1 tenant
SELECT pg_advisory_xact_lock(hashtextextended('runledger.crons:' || $1, 0));
