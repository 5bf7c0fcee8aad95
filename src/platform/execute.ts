// Runs one operation for one caller, the same way for REST and MCP.
// A dry run is the same handler inside a READ ONLY transaction, where
// nothing registered to run after commit ever runs. A write with If-Match
// (EXTENSIONS 3) runs its handler inside the transaction that locked the row
// and checked the precondition, so no other change can slip in between.
import type { Caller, Operation } from './operation.ts';
import { isWrite, noExtras } from './operation.ts';
import type { Services } from './services.ts';
import { AppError } from './errors.ts';
import { withTrace } from './request-log.ts';
import { askApproval, performApproved } from './approval-gate.ts';
import { boundTo, checkPrecondition, contextOf, enforceAccountLimit, type ExecuteOptions } from './operation-steps.ts';

export type { ExecuteOptions };

/** The answer of an operation: its result, or for a key whose writes wait for a person, an ApprovalAnswer (approvals.ts). */
export async function execute(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions = {}) {
  return withTrace(options.trace, () => executeTraced(services, op, caller, input, options));
}

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
      return op.handler(context(boundTo(tx, services.db, false)), input);
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
    if (!inOneTransaction) return await op.handler(context(db), input);
    return await db.tx(async (tx) => {
      if (precondition !== undefined) await checkPrecondition(op, tx, caller, input, precondition, true);
      const result = await op.handler(context(boundTo(tx, db, true)), input);
      if (idempotent && !op.ownTransactions) await idempotent.run.storeInTransaction(tx, idempotent.answerOf(result));
      return result;
    });
  } finally {
    // After the commit (or the failure): the account's next reads wait for a replica that has replayed this far.
    if (reads && isWrite(op)) await reads.noteWrite(caller.accountId);
  }
}
