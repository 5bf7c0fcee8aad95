-- Issue 27: secrets sealed at rest (src/platform/secret-box.ts). SQL cannot
-- encrypt, so this migration makes the columns ready and the start step
-- sealPlaintextSecrets (src/platform/sealed-columns.ts), which runs right
-- after the migrations in every instance and in the CLI, seals the plaintext
-- values still in them: webhook secrets (current, previous, retired), courier
-- credentials and push tokens, the bodies of stored idempotent answers. The
-- operator token becomes its SHA-256 in resolveAdminToken.

-- The subscription view shows the secret's first 8 characters: kept on their own.
ALTER TABLE webhook_subscriptions ADD COLUMN secret_prefix text;
UPDATE webhook_subscriptions SET secret_prefix = left(secret, 8);
ALTER TABLE webhook_subscriptions ALTER COLUMN secret_prefix SET NOT NULL;

-- A pushing courier presents its token: found by its hash, while the sealed
-- token itself is what the courier is told.
ALTER TABLE courier_integrations ADD COLUMN push_token_sha256 text;
UPDATE courier_integrations SET push_token_sha256 = encode(sha256(convert_to(push_token, 'UTF8')), 'hex');
ALTER TABLE courier_integrations ALTER COLUMN push_token_sha256 SET NOT NULL;
ALTER TABLE courier_integrations ADD CONSTRAINT courier_integrations_push_token_sha256_key UNIQUE (push_token_sha256);
ALTER TABLE courier_integrations DROP CONSTRAINT IF EXISTS courier_integrations_push_token_key;

-- Sealed credentials are text (the JSON object, sealed).
ALTER TABLE courier_integrations ALTER COLUMN credentials DROP DEFAULT;
ALTER TABLE courier_integrations ALTER COLUMN credentials TYPE text USING credentials::text;
