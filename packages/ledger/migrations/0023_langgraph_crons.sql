-- 0023_langgraph_crons.sql
-- Crons of the LangGraph Server API (/runs/crons, issue 39) are rows of the same `crons` table,
-- fired by the same ticker under the same key (cron id + scheduled time). Two columns they need:
-- the assistant a firing runs (null for a /v1 cron: it names only its graph), readable so a
-- search can filter on it, and the time after which the cron stops (LangGraph's `end_time`; null:
-- never). Both readable (not tenant data that is sealed): an assistant id and a time. A cron
-- whose next time is past its end is never due again. Append-only like the migrations before it.
ALTER TABLE crons ADD COLUMN assistant_id text;
ALTER TABLE crons ADD COLUMN end_time timestamptz;
CREATE INDEX crons_tenant_assistant ON crons (tenant, assistant_id, created_at) WHERE assistant_id IS NOT NULL;
