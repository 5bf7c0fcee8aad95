// Runs one operation for one caller, the same way for REST and MCP.
// A dry run is the same handler inside a READ ONLY transaction, where
// nothing registered to run after commit ever runs. A write with If-Match
// (EXTENSIONS 3) runs its handler inside the transaction that locked the row
// and checked the precondition, so no other change can slip in between.
import type { Db, Sql } from './db.ts';
import { isWrite, noExtras, type AnswerExtras, type Caller, type Operation, type OperationContext } from './operation.ts';
import type { Services } from './services.ts';
import { AppError } from './errors.ts';
import { checkIfMatch } from './etag.ts';
import type { IdempotentRun, StoredAnswer } from './idempotency.ts';
import { withTrace, type RequestTrace } from './request-log.ts';
import { askApproval, performApproved } from './approval-gate.ts';

/** A Db whose every query, and every nested transaction, runs in `tx`; `commits: false` for a dry run, which never commits. */
export function boundTo(tx: Sql, db: Db, commits: boolean): Db {
  const inner: Sql = commits ? tx : { ...tx, afterCommit: () => {} };
  return {
    kind: db.kind,
    health: db.health,
    query: (text, params, options) => inner.query(text, params, options),
    exec: (script) => inner.exec(script),
    afterCommit: (task) => inner.afterCommit(task),
    reactions: inner.reactions,
    tx: (fn) => fn(inner),
    background: () => inner,
    // Bound to one transaction: notifications are for the service's own Db.
    listen: () => Promise.reject(new Error('a transaction-bound Db does not listen for notifications')),
    close: async () => {},
  };
}

/** EXTENSIONS 3: 404 when the resource is missing (even for `*`), 412 when If-Match does not admit its current ETag. */
export async function checkPrecondition(op: Operation, sql: Sql, caller: Caller, input: Record<string, unknown>, ifMatch: string, lock: boolean) {
  checkIfMatch(ifMatch, await op.etag!.currentEtag(sql, caller.accountId, String(input.id), { lock }));
}

/** SPEC Limits: some operations have a per-account limit besides the key's. */
export async function enforceAccountLimit(services: Services, op: Operation, caller: Caller): Promise<void> {
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

export interface ExecuteOptions {
  dryRun?: boolean;
  /** The caller's If-Match, honoured by operations that declare `etag` (dry runs too). */
  ifMatch?: string;
  /**
   * The request holds an Idempotency-Key (EXTENSIONS 2): the operation runs
   * in one transaction that also stores its answer, as `answerOf` writes it
   * from the result, so that a committed effect is always replayable
   * (issue 27). An operation with its own transactions runs on the run's
   * fenced Db instead, and the transport stores its answer after.
   */
  idempotent?: { run: IdempotentRun; answerOf: (result: unknown) => StoredAnswer };
  /** EXTENSIONS 7: the approval the request names (Merx-Approval, MCP _meta.approval_id): the write runs only as approved. */
  approvalId?: string;
  /** EXTENSIONS 7: the Idempotency-Key of a write that asks for approval (the key is not claimed: it finds the same approval again). */
  idempotencyKey?: string;
  /** EXTENSIONS 7: the request log's record of this call; the events the call commits are noted in it. */
  trace?: RequestTrace;
  /** Filled by the handler with what travels beside the body (headers, MCP _meta). */
  answer?: AnswerExtras;
}

/** The answer of an operation: its result, or for a key whose writes wait for a person, an ApprovalAnswer (approvals.ts). */
export async function execute(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions = {}) {
  return withTrace(options.trace, () => executeTraced(services, op, caller, input, options));
}

/** The context a handler runs with. */
export const contextOf = (services: Services, caller: Caller, dryRun: boolean, answer: AnswerExtras = noExtras()) => (db: Db): OperationContext => ({
  ...services, db, caller, dryRun, answer,
});

async function executeTraced(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  const { dryRun = false, idempotent } = options;
  if (op.feature && !op.feature.enabled(services.config)) {
    throw new AppError('migration_pending', `${op.feature.name} is not enabled on this deployment yet`);
  }
  // EXTENSIONS 7: a write that names an approval runs only as approved; one by a key whose writes wait becomes an approval.
  if (isWrite(op) && !dryRun && options.approvalId !== undefined) return performApproved(services, op, caller, input, options);
  if (isWrite(op) && !dryRun && caller.writes === 'approval') return askApproval(services, op, caller, input, options);
  if (!dryRun) await enforceAccountLimit(services, op, caller);
  const context = contextOf(services, caller, dryRun, options.answer ?? noExtras());
  const precondition = op.etag && options.ifMatch !== undefined ? options.ifMatch : undefined;
  if (dryRun) {
    return services.db.tx(async (tx) => {
      // A read-only transaction cannot lock; a dry run changes nothing that a lock would protect.
      if (precondition !== undefined) await checkPrecondition(op, tx, caller, input, precondition, false);
      return op.handler(context(boundTo(tx, services.db, false)), input as never);
    }, { readOnly: true });
  }
  const db = idempotent && op.ownTransactions ? idempotent.run.fenced() : services.db;
  const inOneTransaction = precondition !== undefined || (idempotent !== undefined && !op.ownTransactions);
  const reads = services.reads;
  // Issue 32: a read goes where read-routing.ts says (a replica that has seen the account's writes, or the primary).
  if (!inOneTransaction && !isWrite(op) && reads && op.readsFrom !== 'primary') {
    return reads.read(caller.accountId, (routed) => op.handler(context(routed), input as never));
  }
  try {
    if (!inOneTransaction) return await op.handler(context(db), input as never);
    return await db.tx(async (tx) => {
      if (precondition !== undefined) await checkPrecondition(op, tx, caller, input, precondition, true);
      const result = await op.handler(context(boundTo(tx, db, true)), input as never);
      if (idempotent && !op.ownTransactions) await idempotent.run.storeInTransaction(tx, idempotent.answerOf(result));
      return result;
    });
  } finally {
    // After the commit (or the failure): the account's next reads wait for a replica that has replayed this far.
    if (reads && isWrite(op)) await reads.noteWrite(caller.accountId);
  }
}
