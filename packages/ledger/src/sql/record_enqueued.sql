-- record_enqueued.sql
-- Records that the queue took the first delivery of new admissions (issued by admit_jobs.sql,
-- id = job_id): one `enqueued` event each, appended only. The event carries attempt 0 and
-- fencing token 0, the values that delivery was issued with: the queue took it before any
-- worker could claim it, so they are what held at the hand-over even when a claim has committed
-- by the time this statement runs. jobs is not read: a join to it cost a key probe per event,
-- and as a prepared statement its generic plan, made while jobs was still small, kept a hash
-- join over a sequential scan of jobs until the next ANALYZE (8 ms per 100 events at 20,000
-- jobs, growing with the table). A job deleted in the milliseconds between its admission and
-- this statement leaves a stray event, dropped with its partition.
-- Params: $1 job_ids (text[]), $2 delivery ids (text[])
INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
SELECT m.job_id, 'enqueued', 0, 0, jsonb_build_object('deliveryId', m.delivery_id)
  FROM unnest($1::text[], $2::text[]) AS m(job_id, delivery_id);
