-- Issue 41 item 9: a key may be issued with an expiry; past it the key answers
-- 401 saying it expired (src/platform/auth.ts). NULL: the key never expires.
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz(3);
