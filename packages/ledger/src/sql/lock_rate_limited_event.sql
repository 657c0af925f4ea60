-- lock_rate_limited_event.sql
-- Serialises the `rate_limited` events of one job until the transaction ends: two deliveries of
-- a job refused at once would otherwise both find no event of the attempt and both write one.
-- The event's own statement comes after this one, so its snapshot sees the other's commit.
-- Params: $1 job_id
SELECT pg_advisory_xact_lock(hashtextextended('runledger.rate_limited:' || $1, 0));
