// Bridge briefs: an agent submits a marketing brief, the merchant's admin
// takes it from draft to live; the bridge itself never publishes (SPEC MCP).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { notFound } from '../../platform/contract/errors.ts';

export const BRIEF_KINDS = ['PAGE', 'AUTOMATION', 'CAMPAIGN', 'SEGMENT'] as const;
export const BRIEF_STATUSES = ['RECEIVED', 'IN_WORK', 'AWAITING_APPROVAL', 'APPROVED', 'LIVE', 'REJECTED', 'FAILED'] as const;

export interface BriefInput {
  kind: (typeof BRIEF_KINDS)[number];
  title: string;
  brief: string;
  operation: string;
  step: string;
  run: string;
}

const COLUMNS = 'id, account_id, kind, status, reason, fail_code, asset_id, public_url, created_at, updated_at';

/** The first brief for (account, operation, step, run) wins; a repeat returns it unchanged. */
export async function submitBrief(tx: Sql, accountId: string, input: BriefInput) {
  await tx.query(
    `INSERT INTO briefs (id, account_id, kind, title, brief, operation, step, run) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (account_id, operation, step, run) DO NOTHING`,
    [crypto.randomUUID(), accountId, input.kind, input.title, input.brief, input.operation, input.step, input.run],
  );
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM briefs WHERE account_id = $1 AND operation = $2 AND step = $3 AND run = $4`, [
    accountId,
    input.operation,
    input.step,
    input.run,
  ]);
  return rows[0];
}

export async function getBrief(sql: Sql, accountId: string | null, briefId: string) {
  const { rows } = await sql.query(`SELECT ${COLUMNS} FROM briefs WHERE id = $1 AND ($2::uuid IS NULL OR account_id = $2::uuid)`, [
    briefId,
    accountId,
  ]);
  if (!rows[0]) throw notFound('brief');
  return rows[0];
}

export function briefStatusView(brief: Record<string, any>, publicBaseUrl: string) {
  const live = brief.status === 'LIVE';
  return {
    brief_id: brief.id,
    kind: brief.kind,
    status: brief.status,
    reason: brief.reason,
    fail_code: brief.fail_code,
    admin_url: `${publicBaseUrl}/admin/briefs/${brief.id}`,
    asset_id: live ? brief.asset_id : null,
    public_url: live ? brief.public_url : null,
  };
}

export async function setBriefStatus(
  tx: Sql,
  briefId: string,
  input: { status: string; reason?: string | null; fail_code?: string | null; asset_id?: string | null; public_url?: string | null },
) {
  const current = await getBrief(tx, null, briefId);
  const { rows } = await tx.query(
    `UPDATE briefs SET status = $2, reason = $3, fail_code = $4, asset_id = $5, public_url = $6, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
    [
      briefId,
      input.status,
      input.reason ?? null,
      input.fail_code ?? null,
      input.asset_id ?? current.asset_id,
      input.public_url ?? current.public_url,
    ],
  );
  return rows[0];
}
