-- The operator console lists an account's shipments newest first, and accounts newest first.
CREATE INDEX shipments_account_created ON shipments (account_id, created_at DESC, id DESC);
CREATE INDEX accounts_created ON accounts (created_at DESC, id DESC);
