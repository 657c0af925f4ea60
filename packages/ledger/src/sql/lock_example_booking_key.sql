-- lock_example_booking_key.sql
-- The demo provider's deduplication lock: serialises bookings that carry the same kind and
-- idempotency key until the transaction ends, so the next statement sees a concurrent winner's row.
-- Params: $1 kind, $2 idempotency_key
SELECT pg_advisory_xact_lock(hashtextextended('runledger.example_booking:' || $1 || ':' || $2, 0));
