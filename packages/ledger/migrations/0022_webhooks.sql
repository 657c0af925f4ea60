-- 0022_webhooks.sql
-- Webhooks (issue 39): a run may name a URL that is told when the run ends. The URL is tenant
-- data, sealed like jobs.input (bound to column + job id); its NULL-ness is the readable
-- "has a webhook" flag. Each end of such a run (completed, failed, cancelled, interrupted,
-- manual_reconcile) writes one outbox row in the same transaction as the status change, by a
-- row trigger: every path to an end (a worker's settle, a cancel, an operator's resolve, the
-- sweep giving up) is covered by one rule, and none of those statements had to change. The
-- producer's dispatcher claims due rows (FOR UPDATE SKIP LOCKED), POSTs, and records each
-- attempt. Append-only like the migrations before it.
ALTER TABLE jobs ADD COLUMN webhook jsonb;

-- One row per run end to announce. delivery_id is the idempotency key the receiver sees: stable
-- across every retry of that end. state: pending (to send, at due_at), delivered (a 2xx came
-- back), gave_up (the retry window closed, or the job has no webhook any more).
CREATE TABLE webhook_deliveries (
  delivery_id  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  job_id       text NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
  tenant       text NOT NULL,
  run_status   text NOT NULL,
  ended_at     timestamptz NOT NULL DEFAULT now(),
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'gave_up')),
  due_at       timestamptz NOT NULL DEFAULT now(),
  attempts     integer NOT NULL DEFAULT 0,
  -- Every attempt and its answer, oldest first: { attempt, at, statusCode, error } (the HTTP
  -- status, or the error when none came: a refused address, a timeout; never the receiver's body).
  answers      jsonb NOT NULL DEFAULT '[]',
  settled_at   timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id, ended_at);

CREATE FUNCTION record_webhook_run_end() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (job_id, tenant, run_status) VALUES (NEW.job_id, NEW.tenant, NEW.status);
  RETURN NULL;
END
$$;

-- The WHEN clause is evaluated without calling the function: a job without a webhook, or an
-- update that keeps the status (a heartbeat, a checkpoint's fence), costs nothing here.
CREATE TRIGGER jobs_webhook_run_end AFTER UPDATE ON jobs FOR EACH ROW
  WHEN (NEW.webhook IS NOT NULL AND OLD.status IS DISTINCT FROM NEW.status
        AND NEW.status IN ('completed', 'failed', 'cancelled', 'interrupted', 'manual_reconcile'))
  EXECUTE FUNCTION record_webhook_run_end();
