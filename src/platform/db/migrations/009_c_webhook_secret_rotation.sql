-- Secret rotation (EXTENSIONS 4): the secret before the latest rotation signs
-- beside the new one until it expires; older and expired secrets are kept for
-- a while only so that the signature self-test (EXTENSIONS 5) can say a
-- signature was made with an expired secret.
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret text;
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_expires_at timestamptz(3);

CREATE TABLE webhook_retired_secrets (
  account_id uuid NOT NULL REFERENCES accounts(id),
  webhook_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  secret text NOT NULL,
  expired_at timestamptz(3) NOT NULL
);
CREATE INDEX webhook_retired_secrets_webhook ON webhook_retired_secrets (webhook_id, expired_at DESC);
