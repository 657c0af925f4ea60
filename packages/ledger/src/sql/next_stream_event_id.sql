-- next_stream_event_id.sql
-- Takes the next id of the stream log's sequence for an event the producer adds at the end of a
-- logged run's stream (its `error`), so ids rise strictly and a later chunk still follows it.
-- Params: none
-- Returns: one row, id.
SELECT nextval(pg_get_serial_sequence('run_stream_events', 'event_id')) AS id;
