// The events feed (EXTENSIONS 1) as a consumer uses it: pages, a cursor to
// follow, and polling until what is expected has arrived.
import assert from 'node:assert/strict';
import { http, type HttpResult } from './harness.ts';
import { eventually } from './webhooks.ts';

export const ENVELOPE_FIELDS = ['account_id', 'api_version', 'created_at', 'data', 'event', 'id'];

export function feedPage(base: string, key: string, query: Record<string, string | number | undefined> = {}): Promise<HttpResult> {
  const qs = new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  ).toString();
  return http(base, 'GET', `/api/v1/events${qs ? `?${qs}` : ''}`, { token: key });
}

/** Follows next_cursor from `cursor` until has_more is false; returns the events read and the cursor to poll with next. */
export async function drainFeed(
  base: string,
  key: string,
  cursor: string | null,
  query: Record<string, string | number> = {},
): Promise<{ events: any[]; cursor: string | null }> {
  const events: any[] = [];
  for (;;) {
    const res = await feedPage(base, key, { ...query, ...(cursor ? { cursor } : {}) });
    assert.equal(res.status, 200, `feed: ${res.status} ${res.text}`);
    assert.deepEqual(Object.keys(res.body).sort(), ['data', 'has_more', 'next_cursor']);
    events.push(...res.body.data);
    if (res.body.data.length > 0) assert.notEqual(res.body.next_cursor, null, 'next_cursor is set once the feed moved past an event');
    cursor = res.body.next_cursor;
    if (!res.body.has_more) return { events, cursor };
  }
}

/** Reads the whole feed from the start until `ready(events)` holds (a page only shows events of finished transactions). */
export async function feedWhen(base: string, key: string, ready: (events: any[]) => boolean, query: Record<string, string | number> = {}) {
  return eventually(async () => {
    const { events } = await drainFeed(base, key, null, query);
    return ready(events) ? events : null;
  }, 'the events feed to show the expected events');
}
