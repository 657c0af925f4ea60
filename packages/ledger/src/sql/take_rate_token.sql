-- take_rate_token.sql
-- Takes one token from the shared token bucket `key`: it holds up to $3 tokens, refills at $2 per
-- second (by the database clock) and starts full. Concurrent takes of one key queue on its row.
-- Params: $1 key, $2 per_second (float8), $3 burst (float8)
-- Returns: taken (a token was taken), tokens (left after this take).
INSERT INTO rate_buckets AS b (key, tokens, taken, updated_at)
VALUES ($1, $3::float8 - 1, true, now())
ON CONFLICT (key) DO UPDATE
   SET taken = LEAST($3::float8, b.tokens + extract(epoch FROM now() - b.updated_at)::float8 * $2::float8) >= 1,
       tokens = LEAST($3::float8, b.tokens + extract(epoch FROM now() - b.updated_at)::float8 * $2::float8)
              - CASE WHEN LEAST($3::float8, b.tokens + extract(epoch FROM now() - b.updated_at)::float8 * $2::float8) >= 1 THEN 1 ELSE 0 END,
       updated_at = now()
RETURNING taken, tokens;
