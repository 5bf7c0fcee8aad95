// The events feed (EXTENSIONS 1), exactly once for a consumer that follows
// its cursor. Events are read in (xid, seq) order: the transaction that wrote
// them, then their order within it. A page only ever holds events of
// transactions that had finished before the page's snapshot was taken: no
// transaction still running can later insert an event at or before a
// position already handed out. The whole argument is in docs/ARCHITECTURE.md.
import type { Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { envelopeJson, SUBSCRIBABLE_EVENTS } from '../../platform/db/outbox.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import type { CursorSeal, ScopedSeal } from '../../platform/contract/cursor-seal.ts';
import type { Scope } from '../../platform/contract/scopes.ts';
import type { Static } from 'typebox';
import type { Envelope } from './schema.ts';

/** EXTENSIONS 1, scope: an event is visible with the read scope of its resource. */
const SCOPE_OF_RESOURCE: Record<string, Scope> = { order: 'orders:read', shipment: 'shipments:read', inventory: 'inventory:read' };
export const FEED_SCOPES = [...new Set(Object.values(SCOPE_OF_RESOURCE))];
const scopeOf = (event: string): Scope => SCOPE_OF_RESOURCE[event.split('.')[0]];

export interface FeedPosition {
  xid: string;
  seq: number;
  /**
   * EXTENSIONS 8: the snapshot of an export (pg_snapshot text, xmin:xmax:xip,...).
   * The export's rows hold every transaction that snapshot sees, and those did
   * not all commit in xid order, so "after the cursor" is: after the position
   * and not visible in the snapshot. Kept until the feed passes the snapshot's
   * xmax, past which no transaction is visible in it.
   */
  snapshot?: string;
}

const CURSOR_SHAPE = /^f1\.(\d{1,20})\.(\d{1,19})(?:\.(\d{1,20}:\d{1,20}:[\d,]{0,5000}))?$/;

/** Sealed to the account like every list cursor (issue 27, cursor-seal.ts). */
export function encodeFeedCursor(seal: ScopedSeal, position: FeedPosition): string {
  return seal.seal(`f1.${position.xid}.${position.seq}${position.snapshot ? `.${position.snapshot}` : ''}`);
}

export function decodeFeedCursor(seal: ScopedSeal, cursor: string): FeedPosition {
  const match = CURSOR_SHAPE.exec(seal.open(cursor) ?? '');
  if (!match) {
    throw new AppError('validation_failed', 'cursor is not an events-feed cursor this API issued; pass next_cursor unchanged');
  }
  return { xid: match[1], seq: Number(match[2]), snapshot: match[3] };
}

/**
 * EXTENSIONS 8: the feed cursor at the snapshot of the transaction `sql` is
 * (repeatable read; called as its first statement, which takes the snapshot).
 * Every event below the snapshot's xmin is visible in it, so the position is
 * (xmin, 0); the events above are told apart by the snapshot itself.
 */
export async function snapshotFeedCursor(sql: Sql, seal: ScopedSeal): Promise<string> {
  const { rows } = await sql.query<{ s: string; xmin: string }>(
    'SELECT pg_current_snapshot()::text AS s, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin',
  );
  return encodeFeedCursor(seal, { xid: rows[0].xmin, seq: 0, snapshot: rows[0].s });
}

/** The position after `last`, carrying the snapshot while events it may have seen can still follow. */
function positionAfter(last: FeedPosition, snapshot: string | undefined): FeedPosition {
  const xmax = snapshot?.split(':')[1];
  return xmax !== undefined && BigInt(last.xid) < BigInt(xmax) ? { xid: last.xid, seq: last.seq, snapshot } : { xid: last.xid, seq: last.seq };
}

/** The event names a caller asked for (all it may see when `type` is absent); 403 for a name outside its scopes, then 400 for an unknown one. */
export function visibleTypes(held: readonly Scope[], type: string | undefined): string[] {
  const visible = SUBSCRIBABLE_EVENTS.filter((name) => held.includes(scopeOf(name)));
  if (type === undefined) return visible;
  const asked = [...new Set(type.split(',').map((name) => name.trim()))];
  const known = (name: string) => (SUBSCRIBABLE_EVENTS as readonly string[]).includes(name);
  // GAPS check order: a scope refusal comes before a validation error.
  const hidden = asked.find((name) => known(name) && !visible.includes(name as never));
  if (hidden) {
    const scope = scopeOf(hidden);
    throw new AppError('scope_missing', `this API key lacks the scope ${scope}, which ${hidden} events need`, undefined, { scope });
  }
  const unknown = asked.filter((name) => !known(name));
  if (unknown.length) {
    throw new AppError('validation_failed', `unknown event type ${unknown.map((n) => `"${n}"`).join(', ')} (test events are not in the feed)`, {
      allowed: [...SUBSCRIBABLE_EVENTS],
    });
  }
  return asked;
}

/**
 * The oldest transaction that may still add events: the oldest one in
 * progress at the statement's snapshot (or, with none, the next to start).
 * Transactions of other databases of the cluster cannot write our events,
 * so they do not hold the feed back.
 */
const HORIZON = `(SELECT coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname <> current_database() AND a.backend_xid = x::xid)),
    pg_snapshot_xmax(pg_current_snapshot())) AS xid)`;

export interface FeedQuery {
  limit: number;
  cursor?: string;
  types: string[];
  since?: string;
  order_id?: string;
}

export async function readFeed(sql: Sql, accountId: string, cursors: CursorSeal, query: FeedQuery) {
  const seal = cursors.scopedTo(accountId);
  const after = query.cursor === undefined ? null : decodeFeedCursor(seal, query.cursor);
  if (after) await refuseExpired(sql, accountId, after);
  const { values, bind } = sqlParameters(accountId, query.types);
  const conditions = ['e.account_id = $1', 'e.event = ANY($2::text[])', 'e.xid < horizon.xid'];
  if (after) conditions.push(`(e.xid, e.seq) > (${bind(after.xid)}::xid8, ${bind(after.seq)}::bigint)`);
  if (after?.snapshot) conditions.push(`NOT pg_visible_in_snapshot(e.xid, ${bind(after.snapshot)}::pg_snapshot)`);
  if (query.since !== undefined) conditions.push(`e.created_at >= ${bind(parseStrictDate('since', query.since))}::timestamptz`);
  if (query.order_id !== undefined) conditions.push(`e.order_id = ${bind(query.order_id)}::uuid`);
  const { rows } = await sql.query<{ xid: string; seq: number; envelope: Static<typeof Envelope> }>(
    `WITH horizon AS MATERIALIZED ${HORIZON}
     SELECT e.xid::text AS xid, e.seq, ${envelopeJson('e')} AS envelope
       FROM events e, horizon
      WHERE ${conditions.join(' AND ')}
      ORDER BY e.xid, e.seq
      LIMIT ${bind(query.limit + 1)}`,
    values,
  );
  const hasMore = rows.length > query.limit;
  const page = hasMore ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map((row) => row.envelope),
    has_more: hasMore,
    // EXTENSIONS 1: unlike other lists, the cursor survives the last page, so a consumer can poll with it.
    next_cursor: last ? encodeFeedCursor(seal, positionAfter(last, after?.snapshot)) : (query.cursor ?? null),
  };
}

/** A cursor before an event the retention job deleted has missed that event: the consumer must start again. */
async function refuseExpired(sql: Sql, accountId: string, after: FeedPosition): Promise<void> {
  const { rowCount } = await sql.query('SELECT 1 FROM event_feed_horizons WHERE account_id = $1 AND (xid, seq) > ($2::xid8, $3::bigint)', [
    accountId,
    after.xid,
    after.seq,
  ]);
  if (rowCount > 0) {
    throw new AppError(
      'validation_failed',
      'this cursor is older than the 30-day retention of the events feed: events after it were deleted; read the feed again from the start',
      { reason: 'cursor_expired' },
    );
  }
}
