-- upgrade_jobs.sql
-- An operator moves waiting or parked jobs of a graph from one version to another (accepted,
-- recovery_required, interrupted; never a leased job). A job whose thread holds no checkpoint
-- moves freely (nothing of the old version's state is resumed); one that holds checkpoints moves
-- when the new version declares the old one compatible ($4), or, with $5 replay, starts again
-- from its stored input: the thread's checkpoints go and the job runs from the start, allowed
-- only when none of its effects is in doubt (pending) and no other job of the thread has written
-- checkpoints (they would go too). Moved jobs get an `upgraded` event.
-- Params: $1 graph, $2 from version, $3 to version, $4 compatible (bool), $5 replay (bool),
--         $6 tenant (null = any), $7 job_id (null = every matching job), $8 note (jsonb, or null)
-- Returns: one row per matching job: job_id, status (after), moved, replayed, refused (reason or null).
WITH cand AS (
  SELECT j.job_id, j.status, j.tenant, j.thread_id, langgraph_thread_id(j.tenant, j.thread_id) AS lg_thread,
         EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = langgraph_thread_id(j.tenant, j.thread_id)) AS has_state,
         EXISTS (SELECT 1 FROM effects e WHERE e.job_id = j.job_id AND e.status = 'pending') AS in_doubt,
         EXISTS (SELECT 1 FROM jobs o WHERE o.tenant = j.tenant AND o.thread_id = j.thread_id AND o.job_id <> j.job_id
                    AND o.first_checkpoint_at IS NOT NULL) AS shared_thread
    FROM jobs j
   WHERE j.graph = $1 AND j.graph_version = $2 AND j.status IN ('accepted', 'recovery_required', 'interrupted')
     AND ($6::text IS NULL OR j.tenant = $6) AND ($7::text IS NULL OR j.job_id = $7)
   ORDER BY j.seq
     FOR UPDATE OF j
), judged AS (
  SELECT cand.*,
         CASE WHEN NOT has_state OR $4 THEN NULL
              WHEN NOT $5 THEN 'incompatible'
              WHEN in_doubt THEN 'effects_in_doubt'
              WHEN shared_thread THEN 'thread_shared'
         END AS refused,
         (has_state AND NOT $4 AND $5) AS replay
    FROM cand
), upd AS (
  UPDATE jobs j
     SET graph_version = $3,
         status = CASE WHEN judged.replay AND j.status = 'interrupted' THEN 'accepted' ELSE j.status END,
         attempt = CASE WHEN judged.replay AND j.status <> 'recovery_required' THEN 0 ELSE j.attempt END,
         first_checkpoint_at = CASE WHEN judged.replay THEN NULL ELSE j.first_checkpoint_at END,
         resume_value = CASE WHEN judged.replay THEN NULL ELSE j.resume_value END,
         interrupt = CASE WHEN judged.replay THEN NULL ELSE j.interrupt END,
         updated_at = now()
    FROM judged
   WHERE j.job_id = judged.job_id AND judged.refused IS NULL
  RETURNING j.job_id, j.status, j.attempt, j.fencing_token, judged.replay, judged.lg_thread
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, detail)
  SELECT job_id, 'upgraded', attempt, fencing_token,
         jsonb_strip_nulls(jsonb_build_object('from', $2::text, 'to', $3::text, 'replay', replay, 'note', $8::jsonb))
    FROM upd
), cp AS (
  DELETE FROM checkpoints c USING upd WHERE upd.replay AND c.thread_id = upd.lg_thread RETURNING 1
), bl AS (
  DELETE FROM checkpoint_blobs b USING upd WHERE upd.replay AND b.thread_id = upd.lg_thread RETURNING 1
), wr AS (
  DELETE FROM checkpoint_writes w USING upd WHERE upd.replay AND w.thread_id = upd.lg_thread RETURNING 1
)
SELECT judged.job_id, coalesce(upd.status, judged.status) AS status, upd.job_id IS NOT NULL AS moved,
       coalesce(upd.replay, false) AS replayed, judged.refused,
       (SELECT count(*) FROM cp) + (SELECT count(*) FROM bl) + (SELECT count(*) FROM wr) AS checkpoint_rows
  FROM judged LEFT JOIN upd ON upd.job_id = judged.job_id;
