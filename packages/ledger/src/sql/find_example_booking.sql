-- find_example_booking.sql
-- What the demo provider knows about a request: its first booking of this kind with this key.
-- Params: $1 kind, $2 idempotency_key
-- Returns: the booking, if any.
SELECT * FROM example_bookings WHERE kind = $1 AND idempotency_key = $2 ORDER BY booking_id LIMIT 1;
