-- count_example_bookings.sql
-- Params: $1 job_id
-- Returns: one row per kind the job booked, with the number of bookings.
SELECT kind, count(*)::int AS bookings FROM example_bookings WHERE job_id = $1 GROUP BY kind;
