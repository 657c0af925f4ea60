-- revoke_admin_session.sql
-- Records that an admin session ended (logout), and forgets revocations of sessions that expired
-- over an hour ago (the hour covers clock skew between the producers, which set the expiry, and
-- the database). Revoking a session twice is a no-op.
-- Params: $1 session_id, $2 expires_at (the session's own expiry)
-- Returns: nothing.
WITH forgotten AS (DELETE FROM admin_session_revocations WHERE expires_at < now() - interval '1 hour')
INSERT INTO admin_session_revocations (session_id, expires_at) VALUES ($1, $2)
ON CONFLICT (session_id) DO NOTHING;
