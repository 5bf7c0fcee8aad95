-- Issue 32, read your writes with read replicas: per account, the primary's
-- WAL position just after the account's last write committed. A read of the
-- account goes to a replica only once its replay has passed this position.
-- UNLOGGED: written after every write, so it must cost no WAL and no flush;
-- a crash of the primary empties it (docs/operations.md "Past one machine").
CREATE UNLOGGED TABLE replica_read_marks (
  account_id uuid PRIMARY KEY,
  lsn pg_lsn NOT NULL
);
