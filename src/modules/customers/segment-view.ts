// The Segment view, written by PostgreSQL (issue 12). Its customer_count is
// not a column: a membership segment counts its members, a computed one the
// customers its filters match now. Those filters compile to SQL (filters.ts,
// which looks up the segments an inSegment names), so the statement is
// written for the segments it shows: one CASE branch per computed segment,
// and PostgreSQL runs every count and writes every view in one statement.
import type { Sql } from '../../platform/db/db.ts';
import { isoTime, jsonObject, type JsonView, JsonText, readArray, readOne } from '../../platform/read-path/index.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { sqlParameters } from '../../platform/contract/paging.ts';
import { filterConditions, isMembership, type Filters } from './filters.ts';

/** SPEC: filters exactly {inSegment: <own id>} (isMembership, in SQL). */
const IS_MEMBERSHIP = `g.filters = jsonb_build_object('inSegment', g.id::text)`;

/** The segments a statement shows, as read just before it: their ids and filters. */
export interface SegmentFiltersRow {
  id: string;
  filters: Filters;
}

/**
 * The view over `segments g`, its fields in the order the JavaScript view
 * printed them; `customerCount` is the SQL of customer_count.
 */
function segmentView(customerCount: string): JsonView {
  return {
    from: 'segments g',
    alias: 'g',
    json: jsonObject({
      id: 'g.id',
      name: 'g.name',
      filters: 'g.filters_json',
      created_at: isoTime('g.created_at'),
      updated_at: isoTime('g.updated_at'),
      kind: `CASE WHEN ${IS_MEMBERSHIP} THEN 'membership' ELSE 'computed' END`,
      customer_count: customerCount,
    }),
  };
}

/**
 * customer_count of the given segments as one expression; `$1` is the
 * account. An inSegment naming a segment gone meanwhile counts no one, as
 * countSegment does.
 */
async function customerCountSql(sql: Sql, accountId: string, segments: SegmentFiltersRow[], bind: (value: unknown) => string): Promise<string> {
  const computed: string[] = [];
  for (const segment of segments) {
    if (isMembership(segment.id, segment.filters)) continue;
    const where = await filterConditions(sql, accountId, segment.filters, bind);
    computed.push(
      `WHEN g.id = ${bind(segment.id)}::uuid THEN (SELECT count(*)::int FROM customer_aggregates c WHERE c.account_id = $1 ${where.map((w) => `AND ${w}`).join(' ')})`,
    );
  }
  return `CASE WHEN ${IS_MEMBERSHIP} THEN (SELECT count(*)::int FROM segment_members m WHERE m.segment_id = g.id) ${computed.join(' ')} END`;
}

/**
 * The views of these segments, oldest first, as one JSON array. Only the
 * segments read are shown, so each has its count (a segment whose filters
 * changed in between is counted by the filters read).
 */
export async function segmentsText(sql: Sql, accountId: string, segments: SegmentFiltersRow[]): Promise<JsonText> {
  if (!segments.length) return new JsonText('[]');
  const { values, bind } = sqlParameters(accountId);
  const count = await customerCountSql(sql, accountId, segments, bind);
  const ids = bind(segments.map((s) => s.id));
  return readArray(sql, segmentView(count), `g.account_id = $1 AND g.id = ANY(${ids}::uuid[])`, values, 'g.created_at, g.id');
}

/** One segment's view (its row read just before, in the same transaction for a write's answer). */
export async function segmentText(sql: Sql, accountId: string, segment: SegmentFiltersRow): Promise<JsonText> {
  const { values, bind } = sqlParameters(accountId);
  const count = await customerCountSql(sql, accountId, [segment], bind);
  // Not prepared: the text depends on the filters.
  const text = await readOne(sql, segmentView(count), `g.account_id = $1 AND g.id = ${bind(segment.id)}::uuid`, values, { prepared: false });
  // Deleted between the two reads of a GET: gone, as it would be a moment later.
  if (!text) throw notFound('segment');
  return text;
}
