-- explain_refusal.sql
-- Why a claim was refused: the job's state and whether its thread (tenant, thread_id) is held by another job.
-- Params: $1 job_id
-- Returns: status, lease state, run_after and the blocking job of the thread (if any).
SELECT j.status, j.run_after, (j.lease_expires_at > now()) AS lease_live,
       greatest(0, extract(epoch FROM (j.run_after - now())) * 1000)::bigint AS due_in_ms,
       (SELECT job_id FROM thread_holder(j.tenant, j.thread_id, j.job_id, j.seq)) AS blocked_by
  FROM jobs j WHERE j.job_id = $1;
