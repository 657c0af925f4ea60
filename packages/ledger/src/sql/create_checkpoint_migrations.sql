-- create_checkpoint_migrations.sql
-- Before PostgresSaver.setup(): its version table, as the saver's own first migration creates
-- it. setup() reads that table before creating it and catches the error, which PostgreSQL still
-- logs as an ERROR on every first start; with the table in place it reads an empty one instead.
-- Params: none. Returns: nothing.
CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)
