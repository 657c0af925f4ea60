-- explain_refusal.sql
-- Why a claim was refused: the job's state and whether its thread (tenant, thread_id) is held by another job.
-- Params: $1 job_id, $2 graph_version_key of each pair the caller serves (text[]; null = any)
-- Returns: status, lease state, run_after, whether the caller serves the job's graph and version,
-- and the blocking job of the thread (if any).
SELECT j.status, j.run_after, (j.lease_expires_at > now()) AS lease_live,
       ($2::text[] IS NULL OR graph_version_key(j.graph, j.graph_version) = ANY ($2::text[])) AS served,
       greatest(0, extract(epoch FROM (j.run_after - now())) * 1000)::bigint AS due_in_ms,
       (SELECT o.job_id FROM jobs o
         WHERE o.tenant = j.tenant AND o.thread_id = j.thread_id AND o.job_id <> j.job_id
           AND ((o.seq < j.seq AND o.status NOT IN ('completed', 'failed', 'cancelled'))
                OR o.status IN ('starting', 'running'))
         ORDER BY o.seq LIMIT 1) AS blocked_by
  FROM jobs j WHERE j.job_id = $1;
