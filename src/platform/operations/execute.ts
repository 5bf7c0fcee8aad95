// Runs one operation for one caller, the same way for REST and MCP: the mode
// of the call is decided once, up front, from the operation, the caller and
// the request's options; each mode is one small function below. The rules
// every run shares are applied here, around whichever mode runs, so that no
// mode can skip them: the per-account limit before a run, and after a write
// the note that makes the account's next reads wait for a replica that has it.
import type { Caller, Operation } from './operation.ts';
import { isWrite } from './operation.ts';
import type { Services } from '../services.ts';
import { AppError } from '../contract/errors.ts';
import { withTrace } from './request-trace.ts';
import {
  boundTo,
  checkPrecondition,
  contextOf,
  enforceAccountLimit,
  ifMatchOf,
  runInTransaction,
  runOnOwnTransactions,
  type ExecuteOptions,
} from './steps.ts';

export type { ExecuteOptions };

/** How a call runs. */
export type Mode =
  /** A dry run: the handler in a READ ONLY transaction, where nothing registered to run after commit ever runs. */
  | 'preview'
  /** EXTENSIONS 7: a write by a key whose writes wait for a person becomes an approval (the agents hook, agents-hook.ts). */
  | 'ask approval'
  /** EXTENSIONS 7: a write that names an approval runs only as approved (the agents hook). */
  | 'run approved'
  /** If-Match (EXTENSIONS 3), or an Idempotency-Key stored with the effect (EXTENSIONS 2, issue 27): one transaction. */
  | 'stored transaction'
  /** The handler opens its own transactions (a plain write, an ownTransactions operation, a read on the primary). */
  | 'own transactions'
  /** Issue 32: a read goes where read-routing.ts says (a replica that has seen the account's writes, or the primary). */
  | 'routed read';

/** The mode of a call, decided once. */
export function modeOf(services: Services, op: Operation, caller: Caller, options: ExecuteOptions): Mode {
  if (options.dryRun) return 'preview';
  if (isWrite(op) && options.approvalId !== undefined) return 'run approved';
  if (isWrite(op) && caller.writes === 'approval') return 'ask approval';
  if (ifMatchOf(op, options) !== undefined || (options.idempotent && !op.ownTransactions)) return 'stored transaction';
  if (!isWrite(op) && services.reads && op.readsFrom !== 'primary') return 'routed read';
  return 'own transactions';
}

type Run = (services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) => Promise<unknown>;

const RUNS: Record<Mode, Run> = {
  preview: preview,
  'ask approval': (services, ...call) => services.agents.askApproval(services, ...call),
  'run approved': (services, ...call) => services.agents.runApproved(services, ...call),
  'stored transaction': runInTransaction,
  'own transactions': runOnOwnTransactions,
  'routed read': routedRead,
};

/** The answer of an operation: its result, or for a key whose writes wait for a person, an ApprovalAnswer (agents-hook.ts). */
export async function execute(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions = {}) {
  return withTrace(options.trace, () => executeTraced(services, op, caller, input, options));
}

async function executeTraced(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  if (op.feature && !op.feature.enabled(services.config)) {
    throw new AppError('migration_pending', `${op.feature.name} is not enabled on this deployment yet`);
  }
  const mode = modeOf(services, op, caller, options);
  const run = () => RUNS[mode](services, op, caller, input, options);
  if (mode === 'preview') return run();
  // SPEC Limits: whatever runs counts against the operation's per-account limit; asking for approval runs nothing.
  if (mode !== 'ask approval') await enforceAccountLimit(services, op, caller);
  if (!isWrite(op)) return run();
  try {
    return await run();
  } finally {
    // After the commit (or the failure), an approval asked included: the account's next reads wait for a replica that has replayed this far.
    await services.reads?.noteWrite(caller.accountId);
  }
}

function preview(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  const ifMatch = ifMatchOf(op, options);
  return services.db.tx(
    async (tx) => {
      // A read-only transaction cannot lock; a dry run changes nothing that a lock would protect.
      if (ifMatch !== undefined) await checkPrecondition(op, tx, caller, input, ifMatch, false);
      return op.handler(contextOf(services, caller, true, options.answer)(boundTo(tx, services.db, false)), input);
    },
    { readOnly: true },
  );
}

function routedRead(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  const context = contextOf(services, caller, false, options.answer);
  return services.reads!.read(caller.accountId, (routed) => op.handler(context(routed), input as never));
}
