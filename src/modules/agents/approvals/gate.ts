// EXTENSIONS 7 in the shared pipeline, for REST and MCP alike: execute()
// hands the agents hook (src/platform/operations/agents-hook.ts) a write by a
// key whose writes wait for a person, which becomes an approval, and a write
// that names an approval, which runs only as approved (approvals.ts).
import type { Sql } from '../../../platform/db/db.ts';
import type { Caller, Operation } from '../../../platform/operations/operation.ts';
import type { Services } from '../../../platform/services.ts';
import { toAppError } from '../../../platform/contract/errors.ts';
import { preconditionFailed } from '../../../platform/contract/etag.ts';
import { jsonOf } from '../../../platform/read-path/index.ts';
import { isWrite } from '../../../platform/operations/operation.ts';
import { ApprovalAnswer } from '../../../platform/operations/agents-hook.ts';
import { approvalOfIdempotencyKey, lockApprovalFor, markExecuted, recordOrReuseApproval, recordResultStatus } from './approvals.ts';
import {
  boundTo,
  checkPrecondition,
  contextOf,
  ifMatchOf,
  runInTransaction,
  runOnOwnTransactions,
  type ExecuteOptions,
} from '../../../platform/operations/steps.ts';

/** The target's ETag an approval is bound to: for the update of a versioned resource (update_order, update_product, update_webhook). */
const bindsEtag = (op: Operation) => op.etag !== undefined && isWrite(op) && op.method === 'PATCH';

/**
 * Asks for approval instead of performing the write: the preview (the dry
 * run), the effects and the target's ETag, read in one read-only
 * transaction, so they describe one state of the shop. A refusal the dry run
 * gives (404, 400, 409, 412) is the answer, and nothing is asked: there is
 * nothing to approve. The same Idempotency-Key asking again gets the same
 * approval back; so does the same request asked again without one while its
 * approval is pending (recordOrReuseApproval).
 */
export async function askApproval(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  const request = {
    accountId: caller.accountId,
    keyId: caller.keyId,
    operation: op.name,
    arguments: input,
    idempotencyKey: options.idempotencyKey ?? null,
  };
  const asked = await approvalOfIdempotencyKey(services.db, request);
  if (asked) return new ApprovalAnswer(asked, true);
  const ifMatch = ifMatchOf(op, options);
  const described = await services.db.tx(
    async (tx) => {
      const ctx = contextOf(services, caller, true)(boundTo(tx, services.db, false));
      if (ifMatch !== undefined) await checkPrecondition(op, tx, caller, input, ifMatch, false);
      const preview = op.dryRunOutput ? JSON.parse(jsonOf(await op.handler(ctx, input))) : null;
      const effects = op.effects ? await op.effects(ctx, input, preview) : defaultEffects(op, preview);
      const resourceEtag = bindsEtag(op) ? await op.etag!.currentEtag(tx, caller.accountId, String(input.id), { lock: false }) : null;
      return { preview, effects, resourceEtag };
    },
    { readOnly: true },
  );
  // The approval is a write of the account: execute() notes it, so that its next reads (get_approval) wait for a replica that has it.
  return recordOrReuseApproval(services.db, { ...request, ...described });
}

/** An operation that does not describe its effects: the fields its preview says would change, or its summary. */
function defaultEffects(op: Operation, preview: unknown): string[] {
  const changes = preview && typeof preview === 'object' ? (preview as { changes?: unknown }).changes : undefined;
  if (changes && typeof changes === 'object' && !Array.isArray(changes)) {
    const fields = Object.keys(changes);
    return [fields.length ? `${op.name} changes ${fields.join(', ')}` : 'nothing changes'];
  }
  return [op.summary];
}

/** 412 when the target changed since the approval was asked for (its ETag then, locked now). */
async function checkApprovedTarget(op: Operation, tx: Sql, caller: Caller, input: Record<string, unknown>, resourceEtag: string | null) {
  if (resourceEtag === null || !op.etag) return;
  const current = await op.etag.currentEtag(tx, caller.accountId, String(input.id), { lock: true });
  if (current !== resourceEtag) throw preconditionFailed(current);
}

/**
 * Runs the write an approval names, exactly once, as any other write of its
 * kind runs (operation-steps.ts). The approval row is locked in the
 * transaction that performs the write and marked used there: a second repeat
 * waits, then finds it used. An operation that commits on its own (around a
 * courier call) is marked used first, in a transaction of its own: it runs at
 * most once, and its outcome's status is recorded after.
 */
export async function performApproved(services: Services, op: Operation, caller: Caller, input: Record<string, unknown>, options: ExecuteOptions) {
  const approvalId = options.approvalId!;
  const status = op.successStatus ?? 200;
  const lockAndCheck = async (tx: Sql) => {
    const approval = await lockApprovalFor(tx, caller, approvalId, op.name, input);
    await checkApprovedTarget(op, tx, caller, input, approval.resourceEtag);
  };
  if (!op.ownTransactions) {
    return runInTransaction(services, op, caller, input, options, { before: lockAndCheck, after: (tx) => markExecuted(tx, approvalId, status) });
  }
  await services.db.tx(async (tx) => {
    await lockAndCheck(tx);
    await markExecuted(tx, approvalId, null);
  });
  try {
    const result = await runOnOwnTransactions(services, op, caller, input, options);
    await recordResultStatus(services.db, approvalId, status).catch(() => {});
    return result;
  } catch (err) {
    await recordResultStatus(services.db, approvalId, toAppError(err).status).catch(() => {});
    throw err;
  }
}
