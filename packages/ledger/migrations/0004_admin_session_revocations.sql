-- 0004_admin_session_revocations.sql
-- Admin browser sessions ended by a logout before their expiry. The session cookie is signed and
-- carries its own expiry, so every producer replica accepts it without a lookup; a logout must
-- reach every replica too, hence a row here rather than a list in one process's memory.
-- A row matters only until the session would have expired anyway: revoke_admin_session.sql
-- deletes the older ones. Append-only like 0001–0003.
CREATE TABLE admin_session_revocations (
  session_id text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
