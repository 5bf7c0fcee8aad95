// get_facts: counts for one asset in a time window, each with where it came
// from. A fact that does not apply to the asset's kind is null (GAPS).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { UNCOUNTED_STATUSES } from '../customers/aggregates.ts';
import { countSegment } from '../customers/segments.ts';

export type AssetKind = 'page' | 'segment' | 'automation' | 'campaign';

/**
 * Which asset an id is: a page, a segment, or whatever a LIVE brief of the
 * account names as its asset_id (GAPS Bridge tools). The admin system gives
 * that id, so it need not be a page or segment row here: a LIVE brief naming
 * it is what makes it the account's asset, of the brief's kind.
 */
export async function assetOf(sql: Sql, accountId: string | null, assetId: string): Promise<{ kind: AssetKind; accountId: string }> {
  const { rows } = await sql.query<{ kind: AssetKind; account_id: string }>(
    `SELECT kind, account_id FROM (
       SELECT 'page' AS kind, account_id, 1 AS rank FROM pages WHERE id = $1
       UNION ALL SELECT 'segment', account_id, 1 FROM segments WHERE id = $1
       UNION ALL SELECT lower(kind), account_id, 2 FROM briefs WHERE asset_id = $1 AND status = 'LIVE'
     ) assets WHERE $2::uuid IS NULL OR account_id = $2::uuid
     ORDER BY rank LIMIT 1`,
    [assetId, accountId],
  );
  const row = rows[0];
  if (!row) throw notFound('asset');
  return { kind: row.kind, accountId: row.account_id };
}

async function activity(sql: Sql, accountId: string, assetId: string, kind: string, from: string, to: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT coalesce(sum(count), 0)::int AS n FROM asset_activity WHERE account_id = $1 AND asset_id = $2 AND kind = $3 AND at >= $4 AND at <= $5',
    [accountId, assetId, kind, from, to],
  );
  return rows[0].n;
}

export async function computeFacts(sql: Sql, accountId: string, assetId: string, from: string, to: string) {
  const asset = await assetOf(sql, accountId, assetId);
  const computedAt = new Date().toISOString();
  const fact = (value: number | null, source: string) => ({ value, source, computed_at: computedAt });
  const na = (why: string) => fact(null, `not applicable: ${why}`);
  const tracked = asset.kind !== 'segment';
  let purchases = na(`a ${asset.kind} takes no orders`);
  if (asset.kind === 'page') {
    const { rows } = await sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM orders WHERE account_id = $1 AND page_id = $2 AND created_at >= $3 AND created_at <= $4 AND status <> ALL($5::text[])',
      [accountId, assetId, from, to, UNCOUNTED_STATUSES],
    );
    purchases = fact(rows[0].n, 'orders placed on the page (cancelled, archived and refunded excluded)');
  }
  const { rows: segmentRows } =
    asset.kind === 'segment'
      ? await sql.query('SELECT id, filters FROM segments WHERE account_id = $1 AND id = $2', [accountId, assetId])
      : { rows: [] };
  return {
    asset_id: assetId,
    from,
    to,
    facts: {
      page_visits: tracked
        ? fact(await activity(sql, accountId, assetId, 'page_visit', from, to), 'recorded page visits')
        : na('a segment has no page'),
      purchases,
      registrations: tracked
        ? fact(await activity(sql, accountId, assetId, 'registration', from, to), 'recorded registrations')
        : na('a segment has no sign-up'),
      attendees: tracked
        ? fact(await activity(sql, accountId, assetId, 'attendance', from, to), 'recorded attendance')
        : na('a segment has no event'),
      segment_size: segmentRows[0]
        ? fact(await countSegment(sql, accountId, segmentRows[0]), 'customers in the segment now (not windowed)')
        : asset.kind === 'segment'
          ? fact(null, "unknown: the segment lives in the admin system, not among this account's saved segments")
          : na(`a ${asset.kind} is not a segment`),
    },
  };
}

export async function recordActivity(tx: Sql, assetId: string, input: { kind: string; count?: number; at?: string }) {
  const asset = await assetOf(tx, null, assetId);
  const { rows } = await tx.query(
    'INSERT INTO asset_activity (id, account_id, asset_id, kind, count, at) VALUES ($1, $2, $3, $4, $5, coalesce($6::timestamptz, now())) RETURNING id, asset_id, kind, count, at',
    [crypto.randomUUID(), asset.accountId, assetId, input.kind, input.count ?? 1, input.at ?? null],
  );
  return rows[0];
}
