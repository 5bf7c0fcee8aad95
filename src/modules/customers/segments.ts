// Segments: membership segments (filters {inSegment: own id}) and computed
// ones (any other filters), with their members and counts.
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { AppError, notFound } from '../../platform/contract/errors.ts';
import { filterConditions, isMembership, requireOwnFilterIds, type Filters } from './filters.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import type { JsonText } from '../../platform/read-path/index.ts';
import { segmentsText, segmentText, type SegmentFiltersRow } from './segment-view.ts';
import { customerKeys } from './key.ts';

export const MAX_MEMBERS_PER_CALL = 500;

const COLUMNS = 'id, name, filters, created_at, updated_at';

export async function countSegment(sql: Sql, accountId: string, segment: { id: string; filters: Filters }): Promise<number> {
  if (isMembership(segment.id, segment.filters)) {
    const { rows } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM segment_members WHERE segment_id = $1', [segment.id]);
    return rows[0].n;
  }
  const { values: params, bind } = sqlParameters(accountId);
  const where = await filterConditions(sql, accountId, segment.filters, bind);
  const { rows } = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM customer_aggregates c WHERE c.account_id = $1 ${where.map((w) => `AND ${w}`).join(' ')}`,
    params,
  );
  return rows[0].n;
}

export async function findSegment(sql: Sql, accountId: string, segmentId: string, options: { lock?: boolean } = {}) {
  const { rows } = await sql.query(`SELECT ${COLUMNS} FROM segments WHERE account_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`, [
    accountId,
    segmentId,
  ]);
  if (!rows[0]) throw notFound('segment');
  return rows[0];
}

/** The Segment view as PostgreSQL writes it (segment-view.ts), or 404. */
export async function getSegmentText(sql: Sql, accountId: string, segmentId: string): Promise<JsonText> {
  return segmentText(sql, accountId, await findSegment(sql, accountId, segmentId));
}

/** Every segment of the account, oldest first, as one JSON array. */
export async function listSegments(sql: Sql, accountId: string): Promise<JsonText> {
  const { rows } = await sql.query<SegmentFiltersRow>('SELECT id, filters FROM segments WHERE account_id = $1', [accountId]);
  return segmentsText(sql, accountId, rows);
}

/** Checks computed filters name rows of this account (404 otherwise) and compile, before anything is written. */
export async function checkFilters(sql: Sql, accountId: string, filters: Filters): Promise<void> {
  await requireOwnFilterIds(sql, accountId, filters);
  await filterConditions(sql, accountId, filters, () => '$0', 0, true);
}

export async function createSegment(tx: Sql, accountId: string, input: { name: string; filters?: Filters }) {
  const id = crypto.randomUUID();
  // SPEC: without filters the segment is a membership segment, {inSegment: <own id>}.
  const filters = input.filters && Object.keys(input.filters).length ? input.filters : { inSegment: id };
  await tx.query('INSERT INTO segments (id, account_id, name, filters) VALUES ($1, $2, $3, $4)', [
    id,
    accountId,
    input.name,
    JSON.stringify(filters),
  ]);
  return segmentText(tx, accountId, { id, filters });
}

export async function updateSegment(tx: Sql, accountId: string, segmentId: string, input: { name?: string; filters?: Filters }) {
  const current = await findSegment(tx, accountId, segmentId, { lock: true });
  // SPEC: filters {} turns it into a membership segment.
  const filters = input.filters === undefined ? current.filters : Object.keys(input.filters).length ? input.filters : { inSegment: segmentId };
  await tx.query('UPDATE segments SET name = $3, filters = $4, updated_at = now() WHERE account_id = $1 AND id = $2', [
    accountId,
    segmentId,
    input.name ?? current.name,
    JSON.stringify(filters),
  ]);
  return segmentText(tx, accountId, { id: current.id, filters });
}

export async function deleteSegment(tx: Sql, accountId: string, segmentId: string) {
  await findSegment(tx, accountId, segmentId, { lock: true });
  const { rowCount } = await tx.query('DELETE FROM segment_members WHERE segment_id = $1', [segmentId]);
  await tx.query('DELETE FROM segments WHERE account_id = $1 AND id = $2', [accountId, segmentId]);
  return { id: segmentId, deleted: true as const, members_removed: rowCount };
}

/** SPEC: {email} or {phone}; email wins; the customer key's one definition (key.ts). */
export async function memberKeys(sql: Sql, customers: Array<{ email?: string; phone?: string }>): Promise<string[]> {
  const keys = (await customerKeys(sql, customers)).map((key, i) => {
    if (!key) throw new AppError('validation_failed', `customers.${i} needs an email or a phone`);
    if (key.length > 200) throw new AppError('validation_failed', `customers.${i} is longer than 200 characters`);
    return key;
  });
  return [...new Set(keys)];
}

export async function requireMembershipSegment(sql: Sql, accountId: string, segmentId: string, options: { lock?: boolean } = {}) {
  const segment = await findSegment(sql, accountId, segmentId, options);
  if (!isMembership(segment.id, segment.filters)) {
    throw new AppError('conflict', 'members can only be added to a membership segment; this one is computed from its filters', {
      kind: 'filter_segment',
    });
  }
  return segment;
}

export async function existingMembers(sql: Sql, segmentId: string, keys: string[]): Promise<Set<string>> {
  const { rows } = await sql.query<{ customer_key: string }>(
    'SELECT customer_key FROM segment_members WHERE segment_id = $1 AND customer_key = ANY($2::text[])',
    [segmentId, keys],
  );
  return new Set(rows.map((r) => r.customer_key));
}

export async function addMembers(tx: Sql, accountId: string, segmentId: string, keys: string[]) {
  await requireMembershipSegment(tx, accountId, segmentId, { lock: true });
  const { rowCount } = await tx.query(
    `INSERT INTO segment_members (account_id, segment_id, customer_key) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`,
    [accountId, segmentId, keys],
  );
  const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM segment_members WHERE segment_id = $1', [segmentId]);
  return { added: rowCount, skipped: keys.length - rowCount, total: rows[0].n };
}

export async function removeMembers(tx: Sql, accountId: string, segmentId: string, keys: string[]) {
  await requireMembershipSegment(tx, accountId, segmentId, { lock: true });
  const { rowCount } = await tx.query('DELETE FROM segment_members WHERE segment_id = $1 AND customer_key = ANY($2::text[])', [segmentId, keys]);
  return { removed: rowCount };
}
