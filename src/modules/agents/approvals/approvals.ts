// EXTENSIONS 7, approvals: a key issued with writes "approval" does not
// perform a write that is not a dry run. The request becomes an Approval
// (the dry-run preview, its effects in sentences, the target's ETag) that a
// person approves or rejects; the key then repeats the request with
// Merx-Approval (MCP _meta.approval_id) and it runs, exactly once, only for
// the same operation and arguments, and only while the target is unchanged.
//
// "Exactly once" holds across instances: the repeat locks the approval row
// in the transaction that runs the operation and marks it executed there,
// so a second repeat waits for the first and then finds it used. An
// operation that commits on its own (a courier call) marks the approval used
// before it runs: at most once, never twice.
import crypto from 'node:crypto';
import type { Db, Sql } from '../../../platform/db/db.ts';
import { AppError, notFound } from '../../../platform/contract/errors.ts';
import { canonicalJson } from '../../../platform/contract/canonical-json.ts';
import { isoTime } from '../../../platform/read-path/index.ts';
import { ApprovalAnswer, type ApprovalStatus, type ApprovalView } from '../../../platform/operations/agents-hook.ts';

export const APPROVAL_TTL_HOURS = 24;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Approval as the API shows it; `expired` is read off the clock, never stored. */
export const APPROVAL_VIEW = `id,
  CASE WHEN status IN ('pending', 'approved') AND expires_at <= now() THEN 'expired' ELSE status END AS status,
  operation, arguments, preview, effects, resource_etag, ${isoTime('requested_at')} AS requested_at, ${isoTime('expires_at')} AS expires_at,
  ${isoTime('decided_at')} AS decided_at, decided_by, reason, ${isoTime('executed_at')} AS executed_at, result_status`;

export interface ApprovalRequest {
  accountId: string;
  keyId: string;
  operation: string;
  arguments: Record<string, unknown>;
  preview: Record<string, unknown> | null;
  effects: string[];
  resourceEtag: string | null;
  idempotencyKey: string | null;
}

const reusedKey = () =>
  new AppError('conflict', 'idempotency_key_reused: this idempotency key asked for approval of a different request', {
    reason: 'idempotency_key_reused',
  });

/** The approval an Idempotency-Key already asked for (same operation and arguments), or null; 409 when it asked for another request. */
export async function approvalOfIdempotencyKey(
  sql: Sql,
  request: Pick<ApprovalRequest, 'accountId' | 'keyId' | 'operation' | 'arguments' | 'idempotencyKey'>,
): Promise<ApprovalView | null> {
  if (request.idempotencyKey === null) return null;
  const { rows } = await sql.query<ApprovalView & { key_id: string; arguments_canonical: string }>(
    `SELECT ${APPROVAL_VIEW}, key_id, arguments_canonical FROM approvals WHERE account_id = $1 AND idempotency_key = $2`,
    [request.accountId, request.idempotencyKey],
  );
  const found = rows[0];
  if (!found) return null;
  if (found.key_id !== request.keyId || found.operation !== request.operation || found.arguments_canonical !== canonicalJson(request.arguments)) {
    throw reusedKey();
  }
  const { key_id: _k, arguments_canonical: _c, ...view } = found;
  return view;
}

/** Records a pending approval; with an Idempotency-Key another request may have just recorded it (then that one is answered). */
export async function recordApproval(sql: Sql, request: ApprovalRequest): Promise<ApprovalAnswer> {
  const { rows } = await sql.query<ApprovalView>(
    `INSERT INTO approvals (id, account_id, key_id, status, operation, arguments, arguments_canonical, preview, effects, resource_etag,
                            idempotency_key, requested_at, expires_at)
     VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10, now(), now() + make_interval(hours => $11))
     ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING ${APPROVAL_VIEW}`,
    [
      crypto.randomUUID(),
      request.accountId,
      request.keyId,
      request.operation,
      JSON.stringify(request.arguments),
      canonicalJson(request.arguments),
      request.preview === null || request.preview === undefined ? null : JSON.stringify(request.preview),
      JSON.stringify(request.effects),
      request.resourceEtag,
      request.idempotencyKey,
      APPROVAL_TTL_HOURS,
    ],
  );
  if (rows[0]) return new ApprovalAnswer(rows[0], false);
  const existing = await approvalOfIdempotencyKey(sql, request);
  if (!existing) throw new AppError('conflict', 'idempotency_key_in_use: retry later', { reason: 'idempotency_key_in_use' });
  return new ApprovalAnswer(existing, true);
}

/**
 * Issue 41 (EXTENSIONS 7): the same key asking again for the same write
 * without an Idempotency-Key gets the approval still pending for it, not a
 * second identical one. "The same" is the operation, the arguments (compared
 * by meaning) and, for a versioned target, its ETag: once the target changed,
 * the earlier approval would fail at execution, so a new one is asked. The
 * look-up and the insert run under a transaction-scoped advisory lock on that
 * identity, so two asks at once record one approval.
 */
export async function recordOrReuseApproval(db: Db, request: ApprovalRequest): Promise<ApprovalAnswer> {
  if (request.idempotencyKey !== null) return recordApproval(db, request);
  const canonical = canonicalJson(request.arguments);
  return db.tx(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 41))', [`approval:${request.keyId}:${request.operation}:${canonical}`]);
    const { rows } = await tx.query<ApprovalView>(
      `SELECT ${APPROVAL_VIEW} FROM approvals
        WHERE account_id = $1 AND status = 'pending' AND key_id = $2 AND operation = $3 AND arguments_canonical = $4
          AND resource_etag IS NOT DISTINCT FROM $5 AND expires_at > now() AND idempotency_key IS NULL
        ORDER BY requested_at DESC LIMIT 1`,
      [request.accountId, request.keyId, request.operation, canonical, request.resourceEtag],
    );
    return rows[0] ? new ApprovalAnswer(rows[0], false) : recordApproval(tx, request);
  });
}

/** An approval of this key (another key's is 404, as is anything that is not an approval id). */
export async function getApproval(sql: Sql, keyId: string, approvalId: string): Promise<ApprovalView> {
  if (!UUID.test(approvalId)) throw notFound('approval');
  const { rows } = await sql.query<ApprovalView>(`SELECT ${APPROVAL_VIEW} FROM approvals WHERE id = $1 AND key_id = $2`, [approvalId, keyId]);
  if (!rows[0]) throw notFound('approval');
  return rows[0];
}

const refusal = (reason: string, message: string) => new AppError('conflict', `${reason}: ${message}`, { reason });

/**
 * The approval a repeated request names, locked for the transaction, checked
 * in EXTENSIONS 7's order (the first that applies answers): not this key's,
 * 404; rejected, 403 approval_rejected; used, 409 approval_used; expired,
 * approval_expired; pending, approval_pending; another operation or other
 * arguments, approval_mismatch. The target's ETag is the caller's to check
 * (412), after these.
 */
export async function lockApprovalFor(
  tx: Sql,
  caller: { keyId: string },
  approvalId: string,
  operation: string,
  args: Record<string, unknown>,
): Promise<{ id: string; resourceEtag: string | null }> {
  if (!UUID.test(approvalId)) throw notFound('approval');
  const { rows } = await tx.query<{
    key_id: string;
    status: string;
    expired: boolean;
    operation: string;
    arguments_canonical: string;
    resource_etag: string | null;
  }>(`SELECT key_id, status, expires_at <= now() AS expired, operation, arguments_canonical, resource_etag FROM approvals WHERE id = $1 FOR UPDATE`, [
    approvalId,
  ]);
  const row = rows[0];
  if (!row || row.key_id !== caller.keyId) throw notFound('approval');
  if (row.status === 'rejected') throw new AppError('approval_rejected', 'this approval was rejected; the request was not performed');
  if (row.status === 'executed') throw refusal('approval_used', 'this approval was already used; a new request needs a new approval');
  if (row.expired) throw refusal('approval_expired', `approvals expire ${APPROVAL_TTL_HOURS} hours after they are asked for; ask again`);
  if (row.status === 'pending') throw refusal('approval_pending', 'nobody has decided yet; wait and repeat the request when it is approved');
  if (row.operation !== operation || row.arguments_canonical !== canonicalJson(args)) {
    throw refusal('approval_mismatch', `the approval is for ${row.operation} with other arguments; repeat exactly the approved request`);
  }
  return { id: approvalId, resourceEtag: row.resource_etag };
}

/** Marks the approval used, in the transaction that performs it; `status` is the answer's (null when not known yet). */
export async function markExecuted(tx: Sql, approvalId: string, status: number | null): Promise<void> {
  await tx.query(`UPDATE approvals SET status = 'executed', executed_at = now(), result_status = $2 WHERE id = $1`, [approvalId, status]);
}

export async function recordResultStatus(sql: Sql, approvalId: string, status: number): Promise<void> {
  await sql.query('UPDATE approvals SET result_status = $2 WHERE id = $1', [approvalId, status]);
}

/** The operator's decision: only a pending, unexpired approval can be decided. */
export async function decideApproval(
  tx: Sql,
  approvalId: string,
  decision: 'approved' | 'rejected',
  decidedBy: string,
  reason: string | null,
): Promise<ApprovalView> {
  if (!UUID.test(approvalId)) throw notFound('approval');
  const { rows } = await tx.query<{ status: string; expired: boolean }>(
    'SELECT status, expires_at <= now() AS expired FROM approvals WHERE id = $1 FOR UPDATE',
    [approvalId],
  );
  const row = rows[0];
  if (!row) throw notFound('approval');
  if (row.status !== 'pending') throw refusal('approval_decided', `this approval is already ${row.status}`);
  if (row.expired) throw refusal('approval_expired', 'this approval expired before it was decided');
  const { rows: decided } = await tx.query<ApprovalView>(
    `UPDATE approvals SET status = $2, decided_at = now(), decided_by = $3, reason = $4 WHERE id = $1 RETURNING ${APPROVAL_VIEW}`,
    [approvalId, decision, decidedBy, reason],
  );
  return decided[0];
}

/** The operator's list of an account's approvals, newest first (status: pending, approved, rejected, expired, executed). */
export async function listApprovals(sql: Sql, accountId: string, status: ApprovalStatus | undefined, limit: number) {
  const where = ['account_id = $1'];
  if (status === 'expired') where.push(`status IN ('pending', 'approved') AND expires_at <= now()`);
  else if (status === 'pending' || status === 'approved') where.push(`status = '${status}' AND expires_at > now()`);
  else if (status) where.push(`status = '${status}'`);
  const { rows } = await sql.query<ApprovalView & { key_prefix: string | null; key_name: string | null }>(
    `SELECT ${APPROVAL_VIEW}, (SELECT prefix FROM api_keys k WHERE k.id = approvals.key_id) AS key_prefix,
      (SELECT name FROM api_keys k WHERE k.id = approvals.key_id) AS key_name
       FROM approvals WHERE ${where.join(' AND ')} ORDER BY requested_at DESC, id DESC LIMIT ${limit}`,
    [accountId],
  );
  return rows;
}

/** The operator's view of one approval (any account's): with the key that asked and the account. */
export async function findApproval(
  sql: Sql,
  approvalId: string,
): Promise<ApprovalView & { account_id: string; key_prefix: string | null; key_name: string | null }> {
  if (!UUID.test(approvalId)) throw notFound('approval');
  const { rows } = await sql.query<ApprovalView & { account_id: string; key_prefix: string | null; key_name: string | null }>(
    `SELECT ${APPROVAL_VIEW}, account_id, (SELECT prefix FROM api_keys k WHERE k.id = approvals.key_id) AS key_prefix,
      (SELECT name FROM api_keys k WHERE k.id = approvals.key_id) AS key_name FROM approvals WHERE id = $1`,
    [approvalId],
  );
  if (!rows[0]) throw notFound('approval');
  return rows[0];
}
