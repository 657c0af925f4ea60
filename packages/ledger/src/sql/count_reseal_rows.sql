-- count_reseal_rows.sql
-- How many rows each table the re-seal walks holds (the progress bar's totals).
-- Params: none
-- Returns: one row of counts named after the tables.
SELECT (SELECT count(*) FROM jobs) AS jobs,
       (SELECT count(*) FROM effects) AS effects,
       (SELECT count(*) FROM job_events) AS job_events,
       (SELECT count(*) FROM run_stream_events) AS run_stream_events,
       (SELECT count(*) FROM crons) AS crons,
       (SELECT count(*) FROM checkpoint_blobs) AS checkpoint_blobs,
       (SELECT count(*) FROM checkpoint_writes) AS checkpoint_writes,
       (SELECT count(*) FROM assistant_versions) AS assistant_versions;
