// Shared pieces of the shipment-batch suites (EXTENSIONS 8): requests, waiting
// for a batch to finish, the courier simulator's modes and call log over the
// operator API (OPERATOR_API "The outside world").
import assert from 'node:assert/strict';
import { http, operator, type HttpResult, type TestService } from './harness.ts';
import { checkoutWith, type Slug } from './shipments.ts';

/** EXTENSIONS 8 Batch. */
export const BATCH_FIELDS = ['id', 'state', 'total', 'succeeded', 'failed', 'pending', 'created_at', 'finished_at'].sort();
/** EXTENSIONS 8 batch item. */
export const ITEM_FIELDS = ['index', 'order_id', 'status', 'shipment_id', 'error'].sort();

export function createBatch(url: string, key: string, items: unknown[], headers: Record<string, string> = {}): Promise<HttpResult> {
  return http(url, 'POST', '/api/v1/shipment-batches', { token: key, body: { items }, headers });
}

/** POST that must be accepted: 202 with Location; returns the Batch. */
export async function startBatch(url: string, key: string, items: unknown[]) {
  const res = await createBatch(url, key, items);
  assert.equal(res.status, 202, res.text);
  assert.equal(res.headers.get('location'), `/api/v1/shipment-batches/${res.body.data.id}`);
  return res.body.data;
}

export const getBatch = (url: string, key: string, id: string) => http(url, 'GET', `/api/v1/shipment-batches/${id}`, { token: key });

/** Polls GET until the batch has finished (finished_at set); returns it. */
export async function waitFinished(url: string, key: string, id: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await getBatch(url, key, id);
    assert.equal(res.status, 200, res.text);
    if (res.body.data.finished_at !== null) return res.body.data;
    assert.ok(Date.now() < until, `batch ${id} still unfinished: ${res.text}`);
    // Under the key's 300 requests a minute however long the batch takes.
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Polls until `check(batch)` holds. */
export async function waitFor(url: string, key: string, id: string, check: (batch: any) => boolean, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const batch = (await getBatch(url, key, id)).body.data;
    if (check(batch)) return batch;
    assert.ok(Date.now() < until, `batch ${id} never got there: ${JSON.stringify(batch)}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

/** Every item of a batch, following next_cursor. */
export async function allItems(url: string, key: string, id: string, query = '') {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const qs = new URLSearchParams(query);
    qs.set('limit', '200');
    if (cursor) qs.set('cursor', cursor);
    const res = await http(url, 'GET', `/api/v1/shipment-batches/${id}/items?${qs}`, { token: key });
    assert.equal(res.status, 200, res.text);
    items.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return items;
}

/** OPERATOR_API courier-sim mode, with `times`. */
export async function simMode(url: string, slug: Slug, mode: string, times?: number) {
  await operator(url).call('POST', `/courier-sim/${slug}/mode`, times === undefined ? { mode } : { mode, times });
}

/** OPERATOR_API courier-sim calls: the courier's last 1,000 calls, oldest first. */
export async function simCalls(
  url: string,
  slug: Slug,
): Promise<Array<{ at: string; operation: string; status: number | null; duration_ms: number | null }>> {
  return (await operator(url).call('GET', `/courier-sim/${slug}/calls`)).data;
}

/** The most calls that were open at one moment, from the call log's arrival times and durations. */
export function mostInFlight(calls: Array<{ at: string; duration_ms: number | null }>): number {
  const edges: Array<[number, number]> = [];
  for (const call of calls) {
    assert.notEqual(call.duration_ms, null, 'every call has closed');
    const start = Date.parse(call.at);
    edges.push([start, 1], [start + call.duration_ms!, -1]);
  }
  // Ends before starts at the same instant: a call that ended as the next began did not overlap it.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (open += delta));
  return most;
}

/** `n` orders checked out with `slug` chosen. */
export async function ordersFor(svc: TestService, accountId: string, slug: Slug | null, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await checkoutWith(svc, accountId, slug)).id);
  return ids;
}
