// The steps of running an operation that execute() and the agents room's
// approval gate (src/modules/agents/approvals/gate.ts) both take: a Db bound
// to one transaction, the If-Match check, the per-account limit, the
// handler's context, the options a transport passes, and the two ways a
// write runs (in one transaction that also stores its answer, or on its own
// transactions).
import type { Db, Sql } from '../db/db.ts';
import { noExtras, type AnswerExtras, type Caller, type Operation, type OperationContext } from './operation.ts';
import type { Services } from '../services.ts';
import { AppError } from '../contract/errors.ts';
import { checkIfMatch } from '../contract/etag.ts';
import type { IdempotentRun, StoredAnswer } from './idempotency.ts';
import type { RequestTrace } from './request-trace.ts';

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
    documentCache: inner.documentCache,
    keyring: inner.keyring,
    tx: (fn) => fn(inner),
    background: () => inner,
    // Bound to one transaction: notifications are for the service's own Db.
    listen: () => Promise.reject(new Error('a transaction-bound Db does not listen for notifications')),
    close: async () => {},
  };
}

/** The caller's If-Match, for an operation that declares `etag` (otherwise it is not a precondition). */
export const ifMatchOf = (op: Operation, options: ExecuteOptions) => (op.etag && options.ifMatch !== undefined ? options.ifMatch : undefined);

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

/** The context a handler runs with. */
export const contextOf =
  (services: Services, caller: Caller, dryRun: boolean, answer: AnswerExtras = noExtras()) =>
  (db: Db): OperationContext => ({
    ...services,
    db,
    caller,
    dryRun,
    answer,
  });

/** What an approved run adds to the transaction of its write (the agents room's approval gate): the approval's lock and check first, its mark last. */
export interface TransactionSteps {
  before?: (tx: Sql) => Promise<void>;
  after?: (tx: Sql) => Promise<void>;
}

/**
 * The write in one transaction: If-Match checked on the locked row (EXTENSIONS 3),
 * the handler, and the answer stored under the request's Idempotency-Key
 * (issue 27), so that no change slips in between and a committed effect is
 * always replayable.
 */
export async function runInTransaction(
  services: Services,
  op: Operation,
  caller: Caller,
  input: Record<string, unknown>,
  options: ExecuteOptions,
  steps: TransactionSteps = {},
) {
  const { idempotent } = options;
  const ifMatch = ifMatchOf(op, options);
  const db = dbOf(services, op, options);
  return db.tx(async (tx) => {
    await steps.before?.(tx);
    if (ifMatch !== undefined) await checkPrecondition(op, tx, caller, input, ifMatch, true);
    const result = await op.handler(contextOf(services, caller, false, options.answer)(boundTo(tx, db, true)), input);
    await steps.after?.(tx);
    if (idempotent && !op.ownTransactions) await idempotent.run.storeInTransaction(tx, idempotent.answerOf(result));
    return result;
  });
}

/** The handler on the Db, opening its own transactions: under a key, each of them proves the key is still held. */
export function runOnOwnTransactions(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  return op.handler(contextOf(services, caller, false, options.answer)(dbOf(services, op, options)), input);
}

/** The Db a write runs on: an operation with its own transactions under a key runs on the key's fenced Db. */
const dbOf = (services: Services, op: Operation, options: ExecuteOptions) =>
  options.idempotent && op.ownTransactions ? options.idempotent.run.fenced() : services.db;
