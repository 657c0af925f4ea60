-- 0020_assistants.sql
-- Stored assistants of the LangGraph Server API, per tenant, with their versions. An assistant
-- row names its graph-independent identity and which version is current (`version`, moved by
-- PATCH and by POST /assistants/:id/latest); every version is its own row and never changes.
-- The built-in assistants (one per served graph, uuid5 of the graph id) are not stored.
CREATE TABLE assistants (
  tenant       text NOT NULL,
  assistant_id text NOT NULL,
  version      integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, assistant_id)
);

-- config, context and description are sealed under RUNLEDGER_ENCRYPTION_KEY (bound to tenant,
-- assistant and version); graph_id, name and metadata stay readable: search filters them in SQL.
CREATE TABLE assistant_versions (
  tenant       text NOT NULL,
  assistant_id text NOT NULL,
  version      integer NOT NULL,
  graph_id     text NOT NULL,
  name         text NOT NULL,
  description  jsonb,
  config       jsonb NOT NULL,
  context      jsonb NOT NULL,
  metadata     jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, assistant_id, version),
  FOREIGN KEY (tenant, assistant_id) REFERENCES assistants (tenant, assistant_id) ON DELETE CASCADE
);
CREATE INDEX assistants_tenant_created ON assistants (tenant, created_at DESC);
