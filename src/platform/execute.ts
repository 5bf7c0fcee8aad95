// Runs one operation for one caller, the same way for REST and MCP.
// A dry run is the same handler inside a READ ONLY transaction, where
// nothing registered to run after commit ever runs.
import type { Db, Sql } from './db.ts';
import type { Caller, Operation, OperationContext } from './operation.ts';
import type { Services } from './services.ts';
import { AppError } from './errors.ts';

/** A Db whose every query, and every nested transaction, runs in `tx`. */
function boundTo(tx: Sql, kind: Db['kind']): Db {
  return {
    kind,
    query: (text, params, options) => tx.query(text, params, options),
    exec: (script) => tx.exec(script),
    // A dry run never commits: nothing may run "after commit".
    afterCommit: () => {},
    tx: (fn) => fn({ ...tx, afterCommit: () => {} }),
    listen: () => Promise.reject(new Error('no LISTEN inside a dry run')),
    close: async () => {},
  };
}

/** SPEC Limits: some operations have a per-account limit besides the key's. */
async function enforceAccountLimit(services: Services, op: Operation, caller: Caller): Promise<void> {
  if (!op.accountLimit) return;
  const outcome = await services.rateLimits.named(op.accountLimit.name, op.accountLimit.perMinute).consume(caller.accountId);
  if (!outcome.allowed) {
    throw new AppError(
      'rate_limited',
      `${op.name} is limited to ${op.accountLimit.perMinute} calls per minute per account`,
      { retry_after_sec: outcome.retryAfterSec },
      { headers: { 'Retry-After': String(outcome.retryAfterSec) } },
    );
  }
}

/** `db`: where the operation writes (an idempotent request's fenced Db); dry runs always use their own read-only transaction. */
export async function execute(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, dryRun: boolean, db: Db = services.db) {
  if (!dryRun) await enforceAccountLimit(services, op, caller);
  const context = (db: Db): OperationContext => ({
    db,
    caller,
    dryRun,
    config: services.config,
    notifier: services.notifier,
    deliveries: services.deliveries,
    couriers: services.couriers,
    faults: services.faults,
  });
  if (dryRun) {
    return services.db.tx((tx) => op.handler(context(boundTo(tx, services.db.kind)), input as never), { readOnly: true });
  }
  return op.handler(context(db), input as never);
}
