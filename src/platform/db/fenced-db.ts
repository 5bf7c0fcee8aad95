// The one wrapper of a Db that a run goes through when something else must
// hold while it commits: an Idempotency-Key's lease (idempotency.ts), a
// shipment batch item's claim (shipments/batch-runner.ts). Each write
// transaction runs `fence` last, before it commits; a fence that throws rolls
// the transaction back, so nothing commits once the holder lost its hold.
import type { Db, Sql } from './db.ts';

/** `db`, except that every transaction that may write runs `fence(tx, result)` before it commits. */
export function fencedDb(db: Db, fence: (tx: Sql, result: unknown) => Promise<void>): Db {
  return {
    kind: db.kind,
    health: db.health,
    reactions: db.reactions,
    documentCache: db.documentCache,
    keyring: db.keyring,
    query: (text, params, options) => db.query(text, params, options),
    exec: (script) => db.exec(script),
    afterCommit: (task) => db.afterCommit(task),
    background: () => db.background(),
    listen: (channel, onNotify, state) => db.listen(channel, onNotify, state),
    // The fenced Db does not own the database it wraps.
    close: async () => {},
    tx: (fn, options) =>
      db.tx(async (tx) => {
        const result = await fn(tx);
        // A read-only transaction commits nothing to fence.
        if (!options?.readOnly) await fence(tx, result);
        return result;
      }, options),
  };
}
