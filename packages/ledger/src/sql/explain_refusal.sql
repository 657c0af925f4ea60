-- explain_refusal.sql
-- Why a claim was refused: the job's state and whether its thread (tenant, thread_id) is held by another job.
-- Params: $1 job_id, $2 graph_version_key of each pair the caller serves (text[]; null = any)
-- Returns: status, lease state, run_after, whether the caller serves the job's graph and version,
-- and the blocking job of the thread (if any).
SELECT j.status, j.run_after, (j.lease_expires_at > now()) AS lease_live,
       ($2::text[] IS NULL OR graph_version_key(j.graph, j.graph_version) = ANY ($2::text[])) AS served,
       greatest(0, extract(epoch FROM (j.run_after - now())) * 1000)::bigint AS due_in_ms,
       (SELECT job_id FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq)) AS blocked_by
  FROM jobs j WHERE j.job_id = $1;
