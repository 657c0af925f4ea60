-- record_enqueued.sql
-- Records that the queue took the first delivery of new admissions (issued by admit_jobs.sql,
-- id = job_id): one `enqueued` event each, appended only; the jobs rows are read, not written.
-- The event carries the job's attempt and token as this statement sees them: a worker may have
-- claimed the delivery already. It takes no lock (locking the row cost PostgreSQL about a third
-- of this path's CPU), so an event recorded while a claim commits can show the token before it;
-- `enqueued` is queue bookkeeping written outside any lease, not a fenced write.
-- Params: $1 job_ids (text[]), $2 delivery ids (text[])
INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
SELECT j.job_id, 'enqueued', j.attempt, j.fencing_token, jsonb_build_object('deliveryId', m.delivery_id)
  FROM unnest($1::text[], $2::text[]) AS m(job_id, delivery_id)
  JOIN jobs j ON j.job_id = m.job_id;
