-- 0001_init.sql
-- The acceptance ledger: one row per admitted job, its append-only timeline, and the
-- effects ledger. Applied into the connection's search_path schema by migrate().

CREATE TABLE jobs (
  job_id              text PRIMARY KEY,
  seq                 bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  tenant              text NOT NULL DEFAULT 'default',
  idempotency_key     text,
  request_hash        text NOT NULL,
  graph               text NOT NULL,
  thread_id           text NOT NULL,
  input               jsonb,
  metadata            jsonb NOT NULL DEFAULT '{}',
  status              text NOT NULL DEFAULT 'accepted' CHECK (status IN
                        ('accepted', 'starting', 'running', 'interrupted', 'recovery_required',
                         'manual_reconcile', 'completed', 'failed', 'cancelled')),
  attempt             integer NOT NULL DEFAULT 0,
  max_attempts        integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  timeout_ms          integer CHECK (timeout_ms > 0),
  fencing_token       bigint NOT NULL DEFAULT 0,
  lease_owner         text,
  lease_expires_at    timestamptz,
  run_after           timestamptz,
  resume_value        jsonb,
  recovery_reason     text,
  result              jsonb,
  error               jsonb,
  interrupt           jsonb,
  accepted_at         timestamptz NOT NULL DEFAULT now(),
  deliveries          integer NOT NULL DEFAULT 0,
  delivery_id         text,
  enqueued_at         timestamptz,
  started_at          timestamptz,
  first_checkpoint_at timestamptz,
  completed_at        timestamptz,
  updated_at          timestamptz NOT NULL DEFAULT now()
);

-- Same tenant + key is the same admission (ARCHITECTURE.md, invariant 6).
CREATE UNIQUE INDEX jobs_idempotency ON jobs (tenant, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- At most one job per thread holds a lease: the database, not the worker, enforces it.
CREATE UNIQUE INDEX jobs_one_active_per_thread ON jobs (thread_id) WHERE status IN ('starting', 'running');
CREATE INDEX jobs_thread_open ON jobs (thread_id, seq) WHERE status NOT IN ('completed', 'failed', 'cancelled');
CREATE INDEX jobs_status_seq ON jobs (status, seq);
CREATE INDEX jobs_tenant_seq ON jobs (tenant, seq);
CREATE INDEX jobs_lease_owner ON jobs (lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE job_events (
  event_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id        text NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
  at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  type          text NOT NULL,
  attempt       integer NOT NULL,
  fencing_token bigint NOT NULL,
  worker_id     text,
  detail        jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX job_events_job ON job_events (job_id, event_id);

CREATE TABLE effects (
  job_id          text NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
  effect_key      text NOT NULL,
  name            text NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'committed', 'failed')),
  idempotency_key text NOT NULL,
  attempts        integer NOT NULL DEFAULT 1,
  fencing_token   bigint NOT NULL,
  result          jsonb,
  error           jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, effect_key)
);

-- The demo provider of the vacation graph: a stand-in for an external booking system.
CREATE TABLE example_bookings (
  booking_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id          text NOT NULL,
  thread_id       text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('flight', 'hotel', 'car')),
  idempotency_key text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX example_bookings_key ON example_bookings (idempotency_key);

-- Workers announce themselves here so operators and `doctor` can see who is alive.
CREATE TABLE workers (
  worker_id    text PRIMARY KEY,
  started_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  info         jsonb NOT NULL DEFAULT '{}'
);
