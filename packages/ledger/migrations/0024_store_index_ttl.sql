-- 0024_store_index_ttl.sql
-- The store's semantic index and expiry (langgraph.json `store.index`, `store.ttl`; a put's `ttl`).
-- An item may expire: `expires_at` (null: never), and `ttl_minutes` to move it again when a read
-- refreshes it. Expired items are never returned and are deleted by the producer's sweep
-- (delete_expired_store_items.sql). `store_vectors` holds one embedding per item and indexed
-- field path, unit length (so a dot product is the cosine), as real[]: exact search in SQL, since
-- pgvector is not everywhere (docs/decisions/0012-store-index.md). Vectors go with their item.
ALTER TABLE store_items ADD COLUMN expires_at timestamptz, ADD COLUMN ttl_minutes double precision;
CREATE INDEX store_items_expiry ON store_items (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE store_vectors (
  tenant     text NOT NULL,
  namespace  text[] NOT NULL,
  key        text NOT NULL,
  field      text NOT NULL,
  embedding  real[] NOT NULL,
  PRIMARY KEY (tenant, namespace, key, field),
  FOREIGN KEY (tenant, namespace, key) REFERENCES store_items ON DELETE CASCADE
);
