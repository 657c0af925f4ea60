-- abandon_pending_effects.sql
-- After a person checked the provider and asked for a replay: effects whose outcome was
-- unknown are marked failed (their rows stay), so the replay calls them again with the same key.
-- Params: $1 job_id, $2 note (jsonb: a string, or sealed when encryption is on; null for none)
-- Returns: the effect keys changed.
UPDATE effects SET status = 'failed', error = jsonb_build_object('reason', 'operator_replay', 'note', $2::jsonb), updated_at = now()
 WHERE job_id = $1 AND status = 'pending'
RETURNING effect_key;
