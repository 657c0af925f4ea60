-- 0025_stream_event_seq.sql
-- A run's stream chunks are numbered from 0 within the run (`seq`), as LangGraph's server numbers
-- a run's SSE events: the SSE id a client sees and sends back in Last-Event-ID. event_id stays the
-- row's key. The next seq is the run's highest plus one, taken under the attempt's fence
-- (append_stream_events.sql); the unique index refuses a second chunk with the same number.
-- Logs written before this migration are numbered in their event_id order
-- (docs/decisions/0019-stream-ids-per-run.md).
ALTER TABLE run_stream_events ADD COLUMN seq integer;
UPDATE run_stream_events e
   SET seq = n.seq
  FROM (SELECT job_id, event_id, (row_number() OVER (PARTITION BY job_id ORDER BY event_id) - 1)::integer AS seq
          FROM run_stream_events) n
 WHERE e.job_id = n.job_id AND e.event_id = n.event_id;
ALTER TABLE run_stream_events ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX run_stream_events_seq ON run_stream_events (job_id, seq);
-- During a rolling deploy, workers of the previous release still insert chunks without a seq;
-- this numbers such a chunk on from the run's last one (under that release's own fence, which
-- share-locks the job row), so their inserts keep working until the last of them is retired.
CREATE FUNCTION number_unsequenced_stream_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NULL THEN
    SELECT coalesce(max(s.seq) + 1, 0) INTO NEW.seq FROM run_stream_events s WHERE s.job_id = NEW.job_id;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER run_stream_events_number BEFORE INSERT ON run_stream_events FOR EACH ROW
  EXECUTE FUNCTION number_unsequenced_stream_event();
