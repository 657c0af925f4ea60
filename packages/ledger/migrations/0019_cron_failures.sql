-- 0019_cron_failures.sql
-- A cron time whose admission was refused (a thread id or input that admission refuses, a stored
-- row older than the checks at create, the tenant over its rate) is recorded as `failed` with the
-- refusal's message in `reason`, and the firing pass goes on with the other crons. Before, the
-- refusal failed the whole pass, so one tenant's bad cron stopped every tenant's crons. The
-- reason is an admission error message (it names the field and the limit, not the cron's
-- input); SECURITY.md lists it as readable. Catalog-only changes: no rewrite.
ALTER TABLE cron_firings DROP CONSTRAINT cron_firings_outcome_check;
ALTER TABLE cron_firings ADD CONSTRAINT cron_firings_outcome_check CHECK (outcome IN ('admitted', 'caught_up', 'missed', 'failed'));
ALTER TABLE cron_firings ADD COLUMN reason text;
