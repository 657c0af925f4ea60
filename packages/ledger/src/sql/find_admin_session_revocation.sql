-- find_admin_session_revocation.sql
-- Whether an admin session was ended by a logout.
-- Params: $1 session_id
-- Returns: one row when it was, none otherwise.
SELECT session_id FROM admin_session_revocations WHERE session_id = $1;
