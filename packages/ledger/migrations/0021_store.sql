-- 0021_store.sql
-- Long-term memory of the LangGraph API: the store (`client.store`, a graph's `config.store` /
-- `getStore()`), items by (namespace, key) per tenant. Values stay readable jsonb, so search
-- filters run in PostgreSQL (SECURITY.md, "readable, and why"). Writes from a graph are fenced by
-- the job's lease in the same statement (store_put.sql). Append-only like the migrations before it.
CREATE TABLE store_items (
  tenant     text NOT NULL,
  namespace  text[] NOT NULL CHECK (cardinality(namespace) > 0),
  key        text NOT NULL,
  value      jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, namespace, key)
);
