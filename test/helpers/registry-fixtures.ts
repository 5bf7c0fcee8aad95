// Fixtures for walking the operation list (DESIGN "one operation, three
// faces"): how to create each kind of resource an operation addresses by id,
// and one valid input per operation. A module that adds an operation adds its
// entries here; an operation without what it needs fails the walk loudly
// instead of being skipped silently.
import crypto from 'node:crypto';
import { admittingScopes, type Operation } from '../../src/platform/operations/operation.ts';
import { SCOPES, type Scope } from '../../src/platform/contract/scopes.ts';
import type { RunningService } from '../../src/server.ts';
import { freshTenant, operator, http, type HttpResult, type TestService } from './harness.ts';
import { callTool } from './mcp.ts';

export interface Tenant {
  svc: TestService;
  op: ReturnType<typeof operator>;
  accountId: string;
  /** A key holding every scope. */
  key: string;
}

export const COURIERS = ['courier_a', 'courier_b', 'courier_c'] as const;

/** A fresh account with an every-scope key and the three couriers enabled (simulator credentials). */
export async function tenant(svc: TestService): Promise<Tenant> {
  const t = await freshTenant(svc.url, { scopes: [...SCOPES] });
  for (const slug of COURIERS) await t.op.call('PUT', `/accounts/${t.accountId}/couriers/${slug}`, { enabled: true });
  return { svc, op: t.op, accountId: t.accountId, key: t.key };
}

/** A public API call that must succeed (fixtures build state through the API where the operator API has no route). */
async function api(t: Tenant, method: string, path: string, body?: unknown): Promise<any> {
  const res = await http(t.svc.url, method, path, { token: t.key, body });
  if (res.status >= 300) throw new Error(`fixture ${method} ${path} -> ${res.status} ${res.text}`);
  return res.body;
}

/** An MCP tool call that must succeed (for MCP-only operations such as the bridge tools). */
async function tool(t: Tenant, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await callTool(t.svc.url, t.key, name, args);
  if (result.isError) throw new Error(`fixture tool ${name} -> ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent;
}

const briefInput = () => ({
  kind: 'PAGE',
  title: 'Spring sale landing page',
  brief: 'A landing page for the spring sale, with the kettle as the hero product.',
  operation: 'walk-op',
  step: 'draft',
  run: `run-${Math.random().toString(36).slice(2, 10)}`,
});

/**
 * The service's debug sink as a webhook URL (SPEC Debug sink; GAPS: the only
 * URL on the service's own host a subscription may use). Without an id the
 * service stores the subscription's own (issue 28); another subscription's id
 * is refused.
 */
export function sinkUrl(t: Tenant, webhookId?: string): string {
  const own = new URL(t.svc.service.services.config.publicBaseUrl);
  return `${own.protocol}//${own.hostname}/api/webhooks/sink${webhookId ? `?id=${webhookId}` : ''}`;
}

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** A subscription delivering to the sink under its own id, so its deliveries succeed. */
async function createWebhook(t: Tenant, events = ['order.updated']): Promise<string> {
  const created = await api(t, 'POST', '/api/v1/webhooks', { url: sinkUrl(t), events, description: 'registry walk' });
  return created.data.id;
}

/**
 * Resource kind (the path segment before a UUID path parameter, e.g. `orders`
 * in /api/v1/orders/:id/shipment, or a kind named in samples[op].targets) ->
 * creates one such resource in the account and returns its id.
 */
export const resourceFactories: Record<string, (t: Tenant) => Promise<string>> = {
  // OPERATOR_API checkout stands in for the storefront.
  orders: async (t) => (await t.op.checkout(t.accountId, { notes: 'created by the operation walk' })).id,
  // A waybill through the public API (the simulator stands in for courier_a), on a fresh checkout order.
  shipments: async (t) => {
    const order = await resourceFactories.orders(t);
    return (await api(t, 'POST', '/api/v1/shipments', { order_id: order })).data.id;
  },
  products: async (t) =>
    (await t.op.createProduct(t.accountId, { name: 'Walk lamp', price: 19.9, sku: `LAMP-${Math.random().toString(36).slice(2, 8)}`, weight_g: 800 }))
      .id,
  // A membership segment holding one customer (so removing members has something to remove).
  segments: async (t) => {
    const segment = (await api(t, 'POST', '/api/v1/segments', { name: `Walk segment ${Math.random().toString(36).slice(2, 6)}` })).data;
    await api(t, 'POST', `/api/v1/segments/${segment.id}/members`, { customers: [{ email: 'walk@example.com' }] });
    return segment.id;
  },
  webhooks: (t) => createWebhook(t),
  // A running recovery of the tenant's newest subscription: the one the operation's `id` was just created for (targets are
  // made in path order). Written straight into the table, its lease held by nobody for an hour: a recovery started through
  // the API with nothing to send would be done before the call under test could see it running.
  recoveries: async (t) => {
    const hooks = (await api(t, 'GET', '/api/v1/webhooks')).data as Array<{ id: string; created_at: string }>;
    const newest = hooks.sort((a, b) => a.created_at.localeCompare(b.created_at)).at(-1)!;
    // One runs per subscription at a time: a second call (fuzzing makes many) gets the one already running.
    await t.svc.service.db.query(
      `INSERT INTO webhook_recoveries (id, account_id, webhook_id, since, until, statuses, matched, lease_owner, lease_until)
       VALUES ($1, $2, $3, now() - interval '1 hour', now(), '{failed,dead}', 0, 'registry fixture', now() + interval '1 hour')
       ON CONFLICT (webhook_id) WHERE state = 'running' DO NOTHING`,
      [crypto.randomUUID(), t.accountId, newest.id],
    );
    const { rows } = await t.svc.service.db.query<{ id: string }>(`SELECT id FROM webhook_recoveries WHERE webhook_id = $1 AND state = 'running'`, [
      newest.id,
    ]);
    return rows[0].id;
  },
  // EXTENSIONS 8: a finished batch whose one item got a waybill (so its labels answer 200), on a fresh checkout order.
  'shipment-batches': async (t) => {
    const order = await resourceFactories.orders(t);
    const id = (await api(t, 'POST', '/api/v1/shipment-batches', { items: [{ order_id: order }] })).data.id;
    // A service without workers (the fuzzer's) runs batches only when asked: the operator's job runs the item now.
    await t.op.call('POST', '/jobs/shipment-batches/run', {});
    for (let i = 0; i < 400; i++) {
      if ((await api(t, 'GET', `/api/v1/shipment-batches/${id}`)).data.finished_at) return id;
      await sleep(25);
    }
    throw new Error(`fixture shipment batch ${id} did not finish`);
  },
  // The account itself (bridge business_id).
  accounts: async (t) => t.accountId,
  briefs: async (t) => (await tool(t, 'submit_brief', briefInput())).brief_id,
  // A bridge asset: a landing page (GAPS Bridge tools: assets are pages, segments, automations, campaigns).
  assets: async (t) => (await t.op.createPage(t.accountId, [])).id,
  // A delivery whose attempt failed, so a retry is allowed: the sink does not know the id it is sent to. The API refuses such a
  // url since issue 28, so the row is written as one stored before that (deployments may hold some), without a network call.
  'webhook-deliveries': async (t) => {
    const created = await api(t, 'POST', '/api/v1/webhooks', { url: sinkUrl(t), events: ['order.updated'] });
    await t.svc.service.db.query('UPDATE webhook_subscriptions SET url = $2 WHERE id = $1', [created.data.id, sinkUrl(t, UNKNOWN_ID)]);
    const sent = await api(t, 'POST', `/api/v1/webhooks/${created.data.id}/test`);
    return sent.data.id;
  },
};

export interface Sample {
  /** A valid body for a write operation, in the caller's account (it may create what it refers to). */
  body?: (t: Tenant) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Query parameters, needed only when the operation has required ones. */
  query?: (t: Tenant) => Promise<Record<string, string>> | Record<string, string>;
  /** Values of path parameters that are not UUIDs (e.g. a customer key). */
  params?: (t: Tenant) => Promise<Record<string, string>> | Record<string, string>;
  /**
   * Query or body arguments that address one resource of the account by UUID
   * (argument name -> resource kind), like UUID path parameters do: another
   * account's id must be 404, a non-UUID 400. Filters that merely narrow a
   * list (page_id on list_orders) do not belong here.
   */
  targets?: Record<string, string>;
  /** Resource kinds this operation needs made otherwise than resourceFactories makes them (a running batch for a cancel). */
  factories?: Record<string, (t: Tenant) => Promise<string>>;
}

/**
 * One valid input per operation name. Write bodies should change something
 * real (status, notes, ...), so that a dry run that leaks shows up in the
 * snapshot of the account's rows.
 */
export const samples: Record<string, Sample> = {
  update_order: {
    body: () => ({ status: 'shipped', tracking_number: 'TRK-WALK-1', courier: 'courier_a', admin_notes: 'set by the operation walk' }),
  },
  create_product: { body: () => ({ name: 'Desk fan', price: 45.5, sku: 'FAN-WALK', weight_g: 1200, delivery_type: 'physical' }) },
  update_product: { body: () => ({ price: 21, marketing_name: 'The lamp', low_stock_threshold: 3 }) },
  record_stock_movement: {
    targets: { product_id: 'products' },
    body: () => ({ type: 'delivery', qty: 5, unit_cost: 2.5, note: 'from the walk' }),
  },
  create_shipment: { targets: { order_id: 'orders' }, body: () => ({ weight_g: 1500 }) },
  cancel_shipment: { body: () => ({ reason: 'cancelled by the operation walk' }) },
  get_shipment: { targets: { id: 'shipments' } },
  create_shipment_batch: { body: async (t) => ({ items: [{ order_id: await resourceFactories.orders(t), weight_g: 1500 }] }) },
  // A batch still running (its one item claimed for an hour by nobody, written straight into the tables): a finished one is answered unchanged.
  cancel_shipment_batch: { body: () => ({}), factories: { 'shipment-batches': runningBatch } },
  create_segment: { body: () => ({ name: 'Big spenders', filters: { minTotal: 100, hasEmail: true } }) },
  update_segment: { body: () => ({ name: 'Renamed by the walk' }) },
  delete_segment: {},
  add_segment_members: { body: () => ({ customers: [{ email: 'Walk@Example.com' }, { phone: '+359888000999' }] }) },
  remove_segment_members: { body: () => ({ customers: [{ email: 'walk@example.com' }] }) },
  add_customer_note: { params: () => ({ key: 'walk@example.com' }), body: () => ({ text: 'Called about the delivery' }) },
  submit_brief: { targets: { business_id: 'accounts' }, body: () => briefInput() },
  get_status: { targets: { brief_id: 'briefs' } },
  get_facts: { targets: { asset_id: 'assets' }, query: () => ({ from: '2026-01-01', to: '2026-12-31T23:59:59Z' }) },
  create_webhook: { body: (t) => ({ url: sinkUrl(t), events: ['order.created', 'order.updated'], description: 'from the walk' }) },
  update_webhook: { body: () => ({ events: ['order.status_changed'], description: 'changed by the walk' }) },
  delete_webhook: {},
  test_webhook: {},
  retry_webhook_delivery: {},
  rotate_webhook_secret: { body: () => ({ previous_secret_ttl_sec: 3600 }) },
  recover_webhook_deliveries: { body: () => ({ since: new Date(Date.now() - 3_600_000).toISOString(), statuses: ['failed', 'dead', 'pending'] }) },
  cancel_recovery: {},
  update_webhook_flow: { body: () => ({ paused: true }) },
  // EXTENSIONS 7: any string is an approval id to look up (an unknown one is 404, like another key's).
  get_approval: { params: async (t) => ({ id: await approvalOf(t) }) },
  // What a receiver saw of a request that carried no signature: a valid question whose answer is missing_headers.
  verify_webhook_signature: { body: () => ({ headers: { 'content-type': 'application/json' }, body: '{}' }) },
};

/** A running shipment batch whose only item is in flight, held by no instance for an hour. */
async function runningBatch(t: Tenant): Promise<string> {
  const id = crypto.randomUUID();
  const order = await resourceFactories.orders(t);
  await t.svc.service.db.query(
    `INSERT INTO shipment_batches (id, account_id, key_id, key_prefix, scopes, total)
     SELECT $1, account_id, id::text, prefix, scopes, 1 FROM api_keys WHERE key_hash = encode(sha256(convert_to($2, 'UTF8')), 'hex')`,
    [id, t.key],
  );
  await t.svc.service.db.query(
    `INSERT INTO shipment_batch_items (batch_id, idx, order_id, body, status, claim_token, lease_until, started_at, runs)
     VALUES ($1, 0, $2, $3, 'running', $4, now() + interval '1 hour', now(), 1)`,
    [id, order, JSON.stringify({ order_id: order }), crypto.randomUUID()],
  );
  return id;
}

/** An approval asked by the tenant's key (written straight into the table: the tenant's key writes directly). */
export async function approvalOf(t: Tenant, key = t.key): Promise<string> {
  const id = crypto.randomUUID();
  await t.svc.service.db.query(
    `INSERT INTO approvals (id, account_id, key_id, status, operation, arguments, arguments_canonical, preview, effects, expires_at)
     SELECT $1, account_id, id, 'pending', 'update_order', '{}', '{}', NULL, '["nothing changes"]', now() + interval '1 day'
       FROM api_keys WHERE key_hash = encode(sha256(convert_to($2, 'UTF8')), 'hex')`,
    [id, key],
  );
  return id;
}

/** Operations that change state (a POST such as verify_webhook_signature may only read). */
export const isWriteOp = (op: Operation) => !op.annotations.readOnlyHint;

/** Path parameter names, in order, e.g. ['id'] for /api/v1/orders/:id/shipment; none for an MCP-only operation (its path is not served). */
export function pathParams(op: Operation): string[] {
  if (op.rest === false) return [];
  return [...op.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
}

function paramSchema(op: Operation, name: string): Record<string, unknown> | undefined {
  return (op.params?.properties as Record<string, Record<string, unknown>> | undefined)?.[name];
}

/** Path parameters declared as UUIDs (SPEC: a non-UUID id is a 400 before any data access). */
export function uuidParams(op: Operation): string[] {
  return pathParams(op).filter((name) => paramSchema(op, name)?.format === 'uuid');
}

/** The resource kind a UUID path parameter addresses: the path segment before it. */
export function kindOf(op: Operation, param: string): string {
  const segments = op.path.split('/');
  const at = segments.indexOf(`:${param}`);
  return segments[at - 1];
}

export interface TargetArg {
  name: string;
  kind: string;
  where: 'path' | 'query' | 'body';
}

/** Every argument that addresses a resource of the account by UUID: UUID path parameters and samples[op].targets. */
export function targetArgs(op: Operation): TargetArg[] {
  const list: TargetArg[] = uuidParams(op).map((name) => ({ name, kind: kindOf(op, name), where: 'path' as const }));
  for (const [name, kind] of Object.entries(samples[op.name]?.targets ?? {})) {
    if (list.some((a) => a.name === name)) continue;
    const where = op.query?.properties[name] ? 'query' : op.body?.properties[name] ? 'body' : op.params?.properties[name] ? 'path' : undefined;
    if (!where) throw new Error(`samples["${op.name}"].targets.${name}: ${op.name} has no such argument`);
    list.push({ name, kind, where });
  }
  return list;
}

function requiredQuery(op: Operation): string[] {
  return ((op.query as { required?: string[] } | undefined)?.required ?? []).slice();
}

/** What is missing for the walk to cover this operation; empty when nothing is. */
export function missingFixtures(op: Operation): string[] {
  const problems: string[] = [];
  let targets: TargetArg[] = [];
  try {
    targets = targetArgs(op);
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const target of targets) {
    if (!resourceFactories[target.kind]) problems.push(`${op.name}: no resourceFactories["${target.kind}"] for argument ${target.name}`);
  }
  const plain = pathParams(op).filter((p) => !uuidParams(op).includes(p));
  if (plain.length && !samples[op.name]?.params)
    problems.push(`${op.name}: no samples["${op.name}"].params for ${plain.map((p) => ':' + p).join(', ')}`);
  if (isWriteOp(op) && !samples[op.name]) problems.push(`${op.name}: no samples["${op.name}"] entry for this write operation`);
  const bodyRequired = ((op.body as { required?: string[] } | undefined)?.required ?? []).filter((name) => !targets.some((a) => a.name === name));
  if (op.body && bodyRequired.length && !samples[op.name]?.body)
    problems.push(`${op.name}: no samples["${op.name}"].body for required ${bodyRequired.join(', ')}`);
  const queryRequired = requiredQuery(op).filter((name) => !targets.some((a) => a.name === name));
  if (queryRequired.length && !samples[op.name]?.query)
    problems.push(`${op.name}: no samples["${op.name}"].query for required ${queryRequired.join(', ')}`);
  return [...new Set(problems)];
}

/** Creates the resources the operation addresses (targetArgs), in the tenant's account; argument name -> id. */
export async function createTargets(op: Operation, t: Tenant): Promise<Record<string, string>> {
  const missing = missingFixtures(op);
  if (missing.length) throw new Error(missing.join('; '));
  const ids: Record<string, string> = {};
  for (const target of targetArgs(op)) ids[target.name] = await (samples[op.name]?.factories?.[target.kind] ?? resourceFactories[target.kind])(t);
  const plain = await samples[op.name]?.params?.(t);
  return { ...plain, ...ids };
}

export interface PreparedCall {
  /** Concrete REST path with the query string. */
  path: string;
  /** The body for REST, when the operation takes one. */
  body?: Record<string, unknown>;
  /** MCP tool arguments: path, query and body flattened (GAPS MCP details). */
  args: Record<string, unknown>;
}

/**
 * Builds the REST request and the MCP arguments for one call of `op`.
 * `ids` gives the path parameters and target arguments (createTargets, or
 * altered copies of it); the rest of the sample input is built in `bodyTenant`.
 */
export async function prepareCall(op: Operation, ids: Record<string, string>, bodyTenant: Tenant): Promise<PreparedCall> {
  const sample = samples[op.name];
  const targets = targetArgs(op);
  const pick = (where: TargetArg['where']) =>
    Object.fromEntries(targets.filter((a) => a.where === where && a.name in ids).map((a) => [a.name, ids[a.name]]));
  const query: Record<string, string> = { ...((await sample?.query?.(bodyTenant)) ?? {}), ...pick('query') };
  let body: Record<string, unknown> | undefined = op.body ? await sample?.body?.(bodyTenant) : undefined;
  const bodyTargets = pick('body');
  if (Object.keys(bodyTargets).length) body = { ...(body ?? {}), ...bodyTargets };
  const pathValues: Record<string, string> = {};
  const inPath = pathParams(op);
  let path = op.path.replace(/:([A-Za-z_]+)/g, (whole, name: string) => {
    if (!inPath.includes(name)) return whole;
    pathValues[name] = ids[name];
    return encodeURIComponent(ids[name] ?? `<missing ${name}>`);
  });
  const qs = new URLSearchParams(query).toString();
  if (qs) path += `?${qs}`;
  const args: Record<string, unknown> = { ...query, ...(body ?? {}), ...pathValues };
  return { path, body, args };
}

/** Every scope but this one, or but those that admit the operation: the key the scope check must refuse. */
export function scopesWithout(target: Operation | Scope): Scope[] {
  const refused = typeof target === 'string' ? [target] : admittingScopes(target);
  return SCOPES.filter((s) => !refused.includes(s));
}

export async function restCall(
  base: string,
  op: Operation,
  key: string | undefined,
  call: PreparedCall,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(base, op.method, call.path, { token: key, body: call.body, headers });
}

/** Tables never compared in a dry-run snapshot, and why. */
const SNAPSHOT_EXCLUDED = new Set([
  // last_used_at is written on a key's first use, dry run or not (SPEC Authentication 2): usage, not data.
  'api_keys',
  // EXTENSIONS 7: every request with a valid key is logged, refused or not: what was asked, not data.
  'request_logs',
  // Issue 32: where a write of the account left the primary's WAL (read-your-writes with replicas): routing, not data.
  'replica_read_marks',
]);

/**
 * Every row of the account, in every table that carries account_id (plus the
 * account row itself), as comparable JSON. orders, events and
 * outbound_messages must be among them.
 */
export async function snapshotAccount(service: RunningService, accountId: string): Promise<Record<string, unknown[]>> {
  const { rows: tables } = await service.db.query<{ table_name: string }>(
    `SELECT DISTINCT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND c.column_name = 'account_id' AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name`,
  );
  const names = tables.map((t) => t.table_name).filter((n) => !SNAPSHOT_EXCLUDED.has(n));
  for (const required of ['orders', 'events', 'outbound_messages']) {
    if (!names.includes(required)) throw new Error(`snapshot: table ${required} has no account_id column`);
  }
  const snapshot: Record<string, unknown[]> = {};
  const account = await service.db.query('SELECT * FROM accounts WHERE id = $1', [accountId]);
  snapshot.accounts = account.rows.map(normalise);
  for (const name of names) {
    const { rows } = await service.db.query(`SELECT * FROM "${name}" WHERE account_id = $1`, [accountId]);
    snapshot[name] = rows.map(normalise).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  return snapshot;
}

function normalise(row: unknown): unknown {
  return JSON.parse(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Work a request schedules after its commit (emails, first webhook attempts)
 * runs on the next turns of this process's event loop: let it run before a
 * snapshot is compared. Polls until `changed` holds or the budget is spent.
 */
export async function settle(check?: () => Promise<boolean>, budgetMs = 3000): Promise<void> {
  const until = Date.now() + budgetMs;
  await sleep(50);
  if (!check) {
    await sleep(250);
    return;
  }
  while (Date.now() < until) {
    if (await check()) return;
    await sleep(50);
  }
}
