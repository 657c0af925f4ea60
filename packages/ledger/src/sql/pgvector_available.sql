-- pgvector_available.sql
-- Whether this PostgreSQL server could install pgvector (the store's index notes it at start-up).
-- Params: none
-- Returns: `available` boolean.
SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available;
