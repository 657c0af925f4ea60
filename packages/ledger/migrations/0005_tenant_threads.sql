-- 0005_tenant_threads.sql
-- A thread belongs to its tenant: the thread key becomes (tenant, thread_id), and the LangGraph
-- checkpoints of a tenant's thread live under a LangGraph thread id of that tenant alone, so
-- two tenants using the same thread id get two threads. Before, the first tenant to use an id
-- owned it and a second one was refused (409, which told it the id was in use), and two
-- admissions racing for a new id could both pass and share one checkpoint history.
-- Append-only like 0001–0003; works on a database with rows (see the rename below).

-- The LangGraph thread id of a tenant's thread: the thread id itself for the `default` tenant
-- (open mode and the admin key; a single-tenant database keeps thread_id = checkpoint thread
-- id), `~<tenant>/<thread id>` for every other tenant. Injective: tenant names cannot contain
-- `/`, and no thread id may start with `~` (the ledger refuses one at admission). The same
-- function is `langGraphThreadId` in packages/ledger/src/threads.ts; a test keeps them equal.
CREATE FUNCTION langgraph_thread_id(tenant text, thread_id text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN tenant = 'default' THEN thread_id ELSE '~' || tenant || '/' || thread_id END $$;

-- The thread guards, per tenant: one leased job per (tenant, thread), and the open jobs of a
-- thread in admission order (claim_lease.sql, explain_refusal.sql, find_open_job_of_thread.sql).
-- Widening a unique index cannot fail on existing rows.
DROP INDEX jobs_one_active_per_thread;
CREATE UNIQUE INDEX jobs_one_active_per_thread ON jobs (tenant, thread_id) WHERE status IN ('starting', 'running');
DROP INDEX jobs_thread_open;
CREATE INDEX jobs_thread_open ON jobs (tenant, thread_id, seq) WHERE status NOT IN ('completed', 'failed', 'cancelled');

-- Existing checkpoints of a thread whose first job belongs to another tenant than `default` move
-- to that tenant's LangGraph thread id, so its running and parked jobs keep their history. A
-- thread id two tenants already shared stays with the tenant that used it first; the other
-- tenant's jobs start from an empty thread. The checkpoint tables are created by LangGraph's
-- setup after the migrations, so a new database has none yet.
DO $$
BEGIN
  IF to_regclass('checkpoints') IS NULL THEN
    RETURN;
  END IF;
  CREATE TEMP TABLE runledger_thread_moves ON COMMIT DROP AS
    SELECT DISTINCT ON (thread_id) thread_id AS old_id, langgraph_thread_id(tenant, thread_id) AS new_id
      FROM jobs ORDER BY thread_id, seq;
  DELETE FROM runledger_thread_moves WHERE old_id = new_id;
  UPDATE checkpoints c SET thread_id = m.new_id FROM runledger_thread_moves m WHERE c.thread_id = m.old_id;
  UPDATE checkpoint_blobs b SET thread_id = m.new_id FROM runledger_thread_moves m WHERE b.thread_id = m.old_id;
  UPDATE checkpoint_writes w SET thread_id = m.new_id FROM runledger_thread_moves m WHERE w.thread_id = m.old_id;
END
$$;
