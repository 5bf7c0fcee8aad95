// Shared pieces of the customer, segment, member and note suites (SPEC
// "Customer, segment, note", Endpoints > "Customers and segments", Limits;
// GAPS "Customers, segments, notes"): the record shapes, small REST
// conveniences, and a probe that tells exactly which customers a computed
// filter matches.
import assert from 'node:assert/strict';
import { http, freshTenant, type HttpResult } from './harness.ts';
import { ISO_RE, UUID_RE, qs } from './contract.ts';

/** The key the customer suites use (brief: customers read/write plus orders read/write). */
export const CUSTOMER_SCOPES = ['customers:read', 'customers:write', 'orders:read', 'orders:write'];
export const DRY = { 'X-Merx-Dry-Run': '1' };

/** GAPS: Customer fields. */
export const CUSTOMER_FIELDS = ['email', 'first_order_at', 'key', 'last_order_at', 'name', 'orders_count', 'phone', 'total_spent'];
/** GAPS: Segment fields. */
export const SEGMENT_FIELDS = ['created_at', 'customer_count', 'filters', 'id', 'kind', 'name', 'updated_at'];
/** SPEC: the computed segment filter keys. */
export const FILTER_KEYS = [
  'minTotal',
  'maxTotal',
  'minOrders',
  'maxOrders',
  'lastOrderBeforeDaysAgo',
  'lastOrderAfterDate',
  'lastOrderBeforeDate',
  'productId',
  'pageId',
  'inSegment',
  'hasEmail',
  'hasPhone',
  'hasAbandonedCart',
];

export function assertCustomerView(c: any, note = ''): void {
  assert.deepEqual(Object.keys(c).sort(), CUSTOMER_FIELDS, `${note}: customer fields`);
  assert.equal(typeof c.key, 'string');
  for (const f of ['name', 'email', 'phone']) assert.ok(c[f] === null || typeof c[f] === 'string', `${note}: ${f} string or null`);
  assert.ok(Number.isInteger(c.orders_count), `${note}: orders_count integer`);
  assert.equal(typeof c.total_spent, 'number', `${note}: total_spent number`);
  assert.match(c.first_order_at, ISO_RE, `${note}: first_order_at`);
  assert.match(c.last_order_at, ISO_RE, `${note}: last_order_at`);
}

export function assertSegmentView(s: any, note = ''): void {
  assert.deepEqual(Object.keys(s).sort(), SEGMENT_FIELDS, `${note}: segment fields`);
  assert.match(s.id, UUID_RE);
  assert.equal(typeof s.name, 'string');
  assert.ok(s.filters && typeof s.filters === 'object' && !Array.isArray(s.filters), `${note}: filters object`);
  const membership = Object.keys(s.filters).length === 1 && s.filters.inSegment === s.id;
  assert.equal(s.kind, membership ? 'membership' : 'computed', `${note}: kind follows filters (SPEC: {inSegment: own id} is membership)`);
  assert.ok(Number.isInteger(s.customer_count) && s.customer_count >= 0, `${note}: customer_count`);
  assert.match(s.created_at, ISO_RE);
  assert.match(s.updated_at, ISO_RE);
}

export interface Shop {
  url: string;
  op: Awaited<ReturnType<typeof freshTenant>>['op'];
  accountId: string;
  key: string;
  /** A public API call; asserts the expected status and returns the whole answer. */
  api(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string>; expect?: number }): Promise<HttpResult>;
  /** Checkout (OPERATOR_API) for one customer; total = price (legacy, quantity 1) unless line items are given. */
  order(customer: { name?: string | null; email?: string | null; phone?: string | null }, extra?: Record<string, unknown>): Promise<any>;
  /** Checkout then a status change through the operator API. */
  orderIn(
    status: string,
    customer: { name?: string | null; email?: string | null; phone?: string | null },
    extra?: Record<string, unknown>,
  ): Promise<any>;
  customers(
    params?: Record<string, string | number | undefined>,
  ): Promise<{ data: any[]; total: number; limit: number; offset: number; has_more: boolean }>;
  /** Every customer (all pages), in list order. */
  allCustomers(params?: Record<string, string | number | undefined>): Promise<any[]>;
  createSegment(body: Record<string, unknown>): Promise<any>;
  segments(): Promise<any[]>;
  segment(id: string): Promise<any>;
  /** customer_count a dry-run create previews for these filters. */
  previewCount(filters: Record<string, unknown>): Promise<number>;
  addMembers(segmentId: string, customers: Array<Record<string, unknown>>): Promise<any>;
}

export async function shop(url: string, scopes: string[] = CUSTOMER_SCOPES): Promise<Shop> {
  const t = await freshTenant(url, { scopes });
  const api: Shop['api'] = async (method, path, options = {}) => {
    const res = await http(url, method, path, { token: t.key, body: options.body, headers: options.headers });
    if (options.expect !== undefined) assert.equal(res.status, options.expect, `${method} ${path} -> ${res.status} ${res.text.slice(0, 500)}`);
    return res;
  };
  const order: Shop['order'] = (customer, extra = {}) =>
    t.op.checkout(t.accountId, {
      customer: { name: 'Someone', email: null, phone: null, ...customer },
      // The operator helper adds a legacy item by default; an order with line items must not carry one.
      legacy: extra.line_items ? undefined : { product_name: 'Mug', quantity: 1, unit_price: 10 },
      ...extra,
    });
  const s: Shop = {
    url,
    op: t.op,
    accountId: t.accountId,
    key: t.key,
    api,
    order,
    async orderIn(status, customer, extra) {
      const o = await order(customer, extra);
      return t.op.setStatus(o.id, status);
    },
    async customers(params = {}) {
      return (await api('GET', `/api/v1/customers${qs(params)}`, { expect: 200 })).body;
    },
    async allCustomers(params = {}) {
      const out: any[] = [];
      for (let offset = 0; ; offset += 200) {
        const page = await s.customers({ ...params, limit: 200, offset });
        out.push(...page.data);
        if (!page.has_more) return out;
      }
    },
    async createSegment(body) {
      const res = await api('POST', '/api/v1/segments', { body, expect: 201 });
      assertSegmentView(res.body.data, 'created segment');
      return res.body.data;
    },
    async segments() {
      const res = await api('GET', '/api/v1/segments', { expect: 200 });
      assert.deepEqual(Object.keys(res.body), ['data']);
      for (const seg of res.body.data) assertSegmentView(seg, 'listed segment');
      return res.body.data;
    },
    async segment(id) {
      const found = (await s.segments()).find((x) => x.id === id);
      assert.ok(found, `segment ${id} is listed`);
      return found;
    },
    async previewCount(filters) {
      const res = await api('POST', '/api/v1/segments', { body: { name: 'preview', filters }, headers: DRY, expect: 200 });
      assert.equal(res.body.dry_run, true);
      return res.body.data.customer_count;
    },
    async addMembers(segmentId, customers) {
      return (await api('POST', `/api/v1/segments/${segmentId}/members`, { body: { customers }, expect: 200 })).body.data;
    },
  };
  return s;
}

/**
 * Tells exactly which of a hand-built set of customers a computed filter
 * matches: every customer gets a one-member membership segment, and
 * `{...filters, inSegment: <that segment>}` (previewed by a dry-run create)
 * counts 1 when the customer matches and 0 when not. The overall count of
 * the filters alone must equal the size of that set plus `outside` (customers
 * of the account that are not in the hand-built set; 0 by default).
 */
export async function prober(s: Shop, customers: Record<string, string>) {
  const probes: Record<string, string> = {};
  for (const [label, key] of Object.entries(customers)) {
    const seg = await s.createSegment({ name: `probe ${label}` });
    const added = await s.addMembers(seg.id, [key.includes('@') ? { email: key } : { phone: key }]);
    assert.equal(added.added, 1);
    probes[label] = seg.id;
  }
  return {
    /** Labels of the customers the filters match, sorted. */
    async matching(filters: Record<string, unknown>): Promise<string[]> {
      const out: string[] = [];
      for (const [label, id] of Object.entries(probes)) {
        const n = await s.previewCount({ ...filters, inSegment: id });
        assert.ok(n === 0 || n === 1, `probe ${label} counts 0 or 1, got ${n}`);
        if (n === 1) out.push(label);
      }
      return out.sort();
    },
    /** Asserts the matched set, and that the previewed total agrees with it. */
    async expect(filters: Record<string, unknown>, expected: string[], note = JSON.stringify(filters)) {
      assert.deepEqual(await this.matching(filters), [...expected].sort(), `${note}: matched customers`);
      assert.equal(await s.previewCount(filters), expected.length, `${note}: previewed customer_count`);
    },
  };
}

/** ISO instant `days` days before now (no timing assertions: the tests keep days of margin). */
export const daysAgo = (days: number, hours = 0) => new Date(Date.now() - days * 86_400_000 - hours * 3_600_000).toISOString();

export const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
