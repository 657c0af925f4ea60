-- claim_lease.sql
-- Takes the lease (starting, or running when the job already has a checkpoint): bumps the fencing token, sets owner and expiry by the database clock.
-- Claimable: accepted or recovery_required (once due: run_after), or leased with an expired lease; and
-- no earlier unfinished job of the same thread (admission order) and no other leased one. A
-- thread is the tenant's: (tenant, thread_id), like jobs_one_active_per_thread.
-- A drained hand-over does not count as an attempt.
-- The `claimed` event, and on a job's first claim the `started` decision (the recovery table's
-- "first attempt, no checkpoint, no pending effect" row) when the caller can run its graph,
-- are written by this same statement, in that order: a claim is one round trip.
-- A worker claims only jobs whose graph and version it serves (graph_version_key in $5; a job
-- with no version matches `<graph>@*`): a refused claim changes nothing, so no attempt is spent.
-- Params: $1 job_id, $2 worker_id, $3 lease ttl (ms),
--         $4 graphs the caller runs (text[]; null = never record `started` here),
--         $5 graph_version_key of each pair the caller serves (text[]; null = any)
-- Returns: the claimed job row plus `previous_status`, `previous_reason`, `claim_started` (the
-- `started` event was written) and `claim_may_have_pending_effects` (false only when the job was
-- `accepted` — no lease, so no effect write can race this statement's snapshot — and has no
-- pending effect; otherwise read them after the claim) and `claim_thread_empty`, or no row when refused.
-- Whether the job is claimable is judged on prev's locked row, not in the UPDATE's WHERE: there,
-- those status conditions imply jobs_thread_open's predicate, and the planner found the row by
-- scanning that partial index instead of the key, walking every dead entry a burst of
-- completions had left in it (1M jobs, 20k just completed: 255 pages and 6.9 ms for one claim).
WITH prev AS (
  SELECT job_id, status, recovery_reason,
         EXISTS (SELECT 1 FROM effects e WHERE e.job_id = jobs.job_id AND e.status = 'pending') AS pending_effects,
         (status IN ('accepted', 'recovery_required')
          OR (status IN ('starting', 'running') AND lease_expires_at < now()))
         AND (run_after IS NULL OR run_after <= now() OR status NOT IN ('accepted', 'recovery_required')) AS claimable
    FROM jobs WHERE job_id = $1 FOR UPDATE
), upd AS (
  UPDATE jobs j
     SET status = CASE WHEN j.first_checkpoint_at IS NULL THEN 'starting' ELSE 'running' END,
         attempt = j.attempt + CASE WHEN j.recovery_reason = 'drained' AND j.status = 'recovery_required' THEN 0 ELSE 1 END,
         fencing_token = j.fencing_token + 1,
         lease_owner = $2,
         lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
         started_at = coalesce(j.started_at, now()),
         run_after = NULL,
         updated_at = now()
    FROM prev
   WHERE j.job_id = prev.job_id AND prev.claimable
     AND ($5::text[] IS NULL OR graph_version_key(j.graph, j.graph_version) = ANY ($5::text[]))
     AND NOT EXISTS (SELECT 1 FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq))
  RETURNING j.*, prev.status AS previous_status, prev.recovery_reason AS previous_reason,
            (prev.status <> 'accepted' OR prev.pending_effects) AS claim_may_have_pending_effects,
            (j.graph = ANY ($4::text[]) AND j.first_checkpoint_at IS NULL AND j.attempt <= 1
             AND j.attempt <= j.max_attempts AND j.recovery_reason IS NULL
             AND NOT prev.pending_effects) IS TRUE AS claim_started,
            -- No checkpoint yet anywhere on the job's LangGraph thread (the saver skips its first read).
            -- A put of an older token that committed while this waited for the row shows in
            -- first_checkpoint_at (re-read under the lock); other writers are held off the thread.
            (j.first_checkpoint_at IS NULL
             AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = langgraph_thread_id(j.tenant, j.thread_id))) AS claim_thread_empty
), ev AS (
  INSERT INTO job_events (job_id, type, attempt, fencing_token, worker_id, detail)
  SELECT upd.job_id, e.type, upd.attempt, upd.fencing_token, $2, e.detail
    FROM upd
   CROSS JOIN LATERAL (VALUES
     (1, 'claimed', jsonb_build_object('from', upd.previous_status, 'reason', upd.previous_reason)),
     (2, 'started', '{}'::jsonb)) AS e (ord, type, detail)
   WHERE e.ord = 1 OR upd.claim_started
   ORDER BY e.ord
)
SELECT * FROM upd;
