-- insert_example_booking.sql
-- The demo provider books: inserts a booking unless it enforces the idempotency key and a
-- booking of this kind with this key exists. Not fenced: it stands for an external system.
-- Params: $1 job_id, $2 thread_id, $3 kind, $4 idempotency_key, $5 enforce_key (boolean)
-- Returns: the new booking, or none when the key was already used (enforce_key only).
INSERT INTO example_bookings (job_id, thread_id, kind, idempotency_key)
SELECT $1, $2, $3, $4
 WHERE NOT $5::boolean
    OR NOT EXISTS (SELECT 1 FROM example_bookings WHERE kind = $3 AND idempotency_key = $4)
RETURNING *;
