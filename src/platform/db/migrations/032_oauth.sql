-- EXTENSIONS 10: OAuth 2.1 for /api/mcp (src/modules/oauth/).
-- A grant is backed by an api_keys row of kind 'oauth_grant': its prefix,
-- scopes, writes (approval mode), last_used_at and revoked_at are that row's,
-- so plan rules, rate limits, approvals, the request log and the key cache's
-- revocation announcements (migration 014) treat a grant as they treat a key.
-- Its key_hash is no hash of anything ('grant:<id>'): no bearer reaches it directly.
ALTER TABLE api_keys ADD COLUMN kind text NOT NULL DEFAULT 'api_key' CHECK (kind IN ('api_key', 'oauth_grant'));

-- Registered clients (RFC 7591) and clients known by a metadata document URL (the URL is the id).
CREATE TABLE oauth_clients (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
  client_name text,
  redirect_uris text[] NOT NULL,
  metadata jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE oauth_grants (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  key_id uuid NOT NULL UNIQUE REFERENCES api_keys(id),
  client_id text NOT NULL REFERENCES oauth_clients(id),
  client_name text NOT NULL,
  redirect_uri text NOT NULL,
  resource text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX oauth_grants_account ON oauth_grants (account_id, created_at);

-- Authorization codes (60 s, once). Only the SHA-256 of a code is kept.
CREATE TABLE oauth_codes (
  code_hash text PRIMARY KEY,
  client_id text NOT NULL,
  account_id uuid NOT NULL REFERENCES accounts(id),
  redirect_uri text NOT NULL,
  resource text NOT NULL,
  scopes text[] NOT NULL,
  writes text NOT NULL CHECK (writes IN ('direct', 'approval')),
  code_challenge text NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  used_at timestamptz(3),
  -- The grant the code was exchanged for: a second use revokes it (RFC 6749 4.1.2).
  grant_id uuid
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

-- Access and refresh tokens, by SHA-256 only.
CREATE TABLE oauth_tokens (
  token_hash text PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES oauth_grants(id),
  kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
  expires_at timestamptz(3),
  -- A refresh token once rotated; presenting it again revokes the grant.
  used_at timestamptz(3),
  revoked_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);

-- One token revoked (RFC 7009): every instance forgets its grant's cached tokens at once (key-cache.ts).
CREATE FUNCTION merx_announce_token_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('merx_key_changes', 'key:' || (SELECT key_id FROM oauth_grants WHERE id = NEW.grant_id)::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER oauth_tokens_announce_change AFTER UPDATE ON oauth_tokens FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at)
  EXECUTE FUNCTION merx_announce_token_change();
