// The Merx API client: openapi-fetch over types generated from the service's
// OpenAPI document (src/schema.ts is written by scripts/build.ts, never by hand).
//   const merx = createMerxClient({ baseUrl: 'https://merx.example.com', apiKey: process.env.MERX_KEY });
//   const { data, error } = await merx.GET('/api/v1/orders', { params: { query: { status: 'new', limit: 10 } } });
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type Schemas = components['schemas'];
export type Order = Schemas['Order'];
export type Shipment = Schemas['Shipment'];
export type Product = Schemas['Product'];
export type StockItem = Schemas['StockItem'];
export type StockMovement = Schemas['StockMovement'];
export type Customer = Schemas['Customer'];
export type Segment = Schemas['Segment'];
export type WebhookSubscription = Schemas['WebhookSubscription'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** `{error: {code, message, scope?, details?}}`: the body of every error answer. */
export type ApiError = Schemas['Error'];

import { exportRecords, type ExportFilters, type ExportRecords, type ExportResource, type RecordExport } from './exports.js';

export { exportRecords, MerxExportError, type ExportFilters, type ExportRecords, type ExportResource, type RecordExport } from './exports.js';

export type MerxClient = Client<paths> & {
  /**
   * EXTENSIONS 8: every record of an export, parsed, resuming with starting_after after a dropped connection:
   *   const orders = merx.exportRecords('orders', { status: 'new' });
   *   for await (const order of orders) …; then follow the feed from orders.eventsCursor.
   */
  exportRecords<R extends ExportResource>(resource: R, filters?: ExportFilters<R>): RecordExport<ExportRecords[R]>;
};

export interface MerxClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where Merx runs, without /api/v1: `https://merx.example.com` or `http://localhost:3000`. */
  baseUrl: string;
  /** A `merx_…` key; its scopes decide which calls succeed. */
  apiKey: string;
}

export function createMerxClient(options: MerxClientOptions): MerxClient {
  const { apiKey, baseUrl, headers, ...rest } = options;
  if (!/^merx_/.test(apiKey ?? '')) throw new TypeError('apiKey must be a Merx API key (merx_…)');
  const client = createClient<paths>({
    ...rest,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(headers as Record<string, string> | undefined), Authorization: `Bearer ${apiKey}` },
  });
  return Object.assign(client, {
    exportRecords: <R extends ExportResource>(resource: R, filters?: ExportFilters<R>) =>
      exportRecords({ baseUrl, apiKey, fetch: rest.fetch as typeof fetch | undefined }, resource, filters),
  });
}

/** A list answer: `{data, has_more, next_cursor}`. */
interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * Every item of a keyset-paged list, page after page:
 *   for await (const order of allPages((cursor) => merx.GET('/api/v1/orders', { params: { query: { status: 'new', cursor } } }))) …
 * Stops at the first error answer, throwing it.
 */
export async function* allPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ data?: Page<T>; error?: unknown; response: Response }>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const { data, error, response } = await fetchPage(cursor);
    if (!data) throw Object.assign(new Error(`Merx answered ${response.status}`), { status: response.status, body: error });
    yield* data.data;
    if (!data.has_more || !data.next_cursor) return;
    cursor = data.next_cursor;
  }
}

export { createShipmentBatch, waitForBatch, MerxError } from './batches.js';
export type { ShipmentBatch, ShipmentBatchItem, ShipmentBatchItemBody, CreateBatchOptions, WaitOptions } from './batches.js';
