// EXTENSIONS 6: a subscription's deliveries, newest first, filtered by status
// and event and paged by a keyset cursor on (created_at, id). The body stays
// SPEC's {data: [...]}; where the next page starts travels beside it (REST
// `Link: rel="next"`, MCP `_meta.next_cursor`).
import type { Sql } from '../../../platform/db/db.ts';
import type { ScopedSeal } from '../../../platform/contract/cursor-seal.ts';
import { isoTime, JsonText } from '../../../platform/read-path/index.ts';
import { afterCursor, encodeCursor, sqlParameters } from '../../../platform/contract/paging.ts';
import { DELIVERY_VIEW } from './deliveries.ts';

export interface DeliveryFilters {
  limit: number;
  status?: string;
  event?: string;
  cursor?: string;
}

/** One page: the {data} answer and the cursor of the next page (null on the last). */
export async function listDeliveryPage(
  sql: Sql,
  seal: ScopedSeal,
  accountId: string,
  webhookId: string,
  filters: DeliveryFilters,
): Promise<{ answer: JsonText; nextCursor: string | null }> {
  const { values, bind } = sqlParameters(accountId, webhookId);
  const where = ['d.account_id = $1', 'd.webhook_id = $2'];
  if (filters.status !== undefined) where.push(`d.status = ${bind(filters.status)}`);
  if (filters.event !== undefined) where.push(`d.event = ${bind(filters.event)}`);
  if (filters.cursor !== undefined) where.push(afterCursor(seal, filters.cursor, bind, 'd'));
  const { rows } = await sql.query<{ v: string; c: string; i: string }>(
    `SELECT ${DELIVERY_VIEW.json}::text AS v, ${isoTime('d.created_at')} AS c, d.id::text AS i
       FROM ${DELIVERY_VIEW.from} WHERE ${where.join(' AND ')}
      ORDER BY d.created_at DESC, d.id DESC LIMIT ${bind(filters.limit + 1)}`,
    values,
  );
  const hasMore = rows.length > filters.limit;
  const page = hasMore ? rows.slice(0, filters.limit) : rows;
  const last = page[page.length - 1];
  return {
    answer: new JsonText(`{"data":[${page.map((r) => r.v).join(',')}]}`),
    nextCursor: hasMore ? encodeCursor(seal, { createdAt: last.c, id: last.i }) : null,
  };
}

/** RFC 8288: the next page's address, with the same filters and limit. */
export function nextLink(webhookId: string, filters: DeliveryFilters, nextCursor: string): string {
  const query = new URLSearchParams();
  if (filters.status !== undefined) query.set('status', filters.status);
  if (filters.event !== undefined) query.set('event', filters.event);
  query.set('limit', String(filters.limit));
  query.set('cursor', nextCursor);
  return `</api/v1/webhooks/${webhookId}/deliveries?${query}>; rel="next"`;
}
