// Inputs PostgreSQL cannot hold are refused before any data access, in one
// place for every operation (src/platform/contract/validation.ts), never a 500:
//   - a NUL character (U+0000) anywhere in a string or a key: query
//     parameters, path parameters, body strings at any depth;
//   - dates outside years 0001..9999 in UTC (year 0000, and
//     9999-12-31T23:59:59-14:00, which is year 10000 in UTC), in every strict
//     date parameter, in segment filters and inside cursors.
// Walks the operation list so that every operation, present and future,
// is covered: REST gives 400 validation_failed, MCP -32602, and nothing is written.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { operations } from '../src/app.ts';
import type { Operation } from '../src/platform/operations/operation.ts';
import { startTestService, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { callTool, rpc, toolCall } from './helpers/mcp.ts';
import {
  tenant,
  createTargets,
  prepareCall,
  restCall,
  snapshotAccount,
  settle,
  pathParams,
  uuidParams,
  type PreparedCall,
  type Tenant,
} from './helpers/registry-fixtures.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const NUL = '\u0000';
type Json = Record<string, unknown>;
type Schema = { type?: unknown; format?: string; properties?: Record<string, Schema>; items?: Schema };
const isString = (schema: Schema | undefined) => [schema?.type].flat().includes('string');
const label = (op: Operation) => `${op.name} (${op.method} ${op.path})`;

/** Dot paths of every string in a JSON value (arrays by index). */
function stringLeaves(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return [path];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => stringLeaves(inner, [...path, key]));
}

function setAt(value: Json, path: string[], leaf: unknown): Json {
  const copy = structuredClone(value);
  let at: any = copy;
  for (const key of path.slice(0, -1)) at = at[key] ??= {};
  at[path.at(-1)!] = leaf;
  return copy;
}

/** A variant of a prepared call: query parameters, body and MCP arguments changed alike. */
interface Variant {
  note: string;
  query?: Record<string, string>;
  body?: Json;
  pathValue?: [string, string];
}

function apply(op: Operation, call: PreparedCall, variant: Variant): PreparedCall {
  const [pathOnly, search = ''] = call.path.split('?');
  const params = new URLSearchParams(search);
  for (const [k, v] of Object.entries(variant.query ?? {})) params.set(k, v);
  let path = pathOnly;
  const args: Json = { ...call.args, ...(variant.query ?? {}), ...(variant.body ?? {}) };
  if (variant.pathValue) {
    const [name, value] = variant.pathValue;
    const current = String(call.args[name]);
    path = path.replace(encodeURIComponent(current), encodeURIComponent(value));
    args[name] = value;
  }
  const qs = params.toString();
  return { path: qs ? `${path}?${qs}` : path, body: variant.body ? { ...(call.body ?? {}), ...variant.body } : call.body, args };
}

/** Expects the REST and MCP faces of `op` to refuse the variant before any data access. */
async function expectRefused(t: Tenant, op: Operation, call: PreparedCall, variant: Variant, message: RegExp) {
  const bad = apply(op, call, variant);
  if (op.rest !== false) {
    const res = await restCall(svc.url, op, t.key, bad);
    assertError(res, 400, 'validation_failed', `${op.name} ${variant.note}`);
    assert.match(res.body.error.message, message, `${op.name} ${variant.note}`);
  }
  if (op.mcp !== false) {
    const res = await rpc(svc.url, t.key, toolCall(op.name, bad.args));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.error?.code, -32602, `MCP ${op.name} ${variant.note}: ${res.text}`);
  }
}

/** Every place of the input with `bad` in it: each string query parameter, each string of the sample body, a body key, plain path parameters. */
function badTextVariants(op: Operation, call: PreparedCall, bad: string): Variant[] {
  const variants: Variant[] = [];
  for (const [name, schema] of Object.entries<Schema>((op.query?.properties ?? {}) as never)) {
    if (isString(schema) || schema.type === undefined) variants.push({ note: `query ${name}`, query: { [name]: `a${bad}b` } });
  }
  for (const leaf of stringLeaves(call.body ?? {})) {
    const current = leaf.reduce<any>((at, key) => at[key], call.body);
    variants.push({ note: `body ${leaf.join('.')}`, body: setAt(call.body ?? {}, leaf, `${current}${bad}`) });
  }
  if (op.body) variants.push({ note: 'a body key', body: { ...(call.body ?? {}), [`x${bad}`]: 1 } });
  // A path carries no lone surrogate (it is sent as UTF-8); invalid UTF-8 in a path is tested in http-conventions.
  if (bad !== NUL) return variants;
  for (const name of pathParams(op).filter((p) => !uuidParams(op).includes(p))) {
    variants.push({ note: `path ${name}`, pathValue: [name, `a${NUL}b@example.com`] });
  }
  return variants;
}

for (const op of operations) {
  test(`${label(op)}: a NUL (or, in a JSON body, an unpaired surrogate) in any string or key of the input is 400 validation_failed (MCP -32602) before any data access`, async () => {
    const t = await tenant(svc);
    const call = await prepareCall(op, await createTargets(op, t), t);
    const before = await snapshotAccount(svc.service, t.accountId);
    for (const variant of badTextVariants(op, call, NUL)) await expectRefused(t, op, call, variant, /NUL/);
    // An unpaired surrogate is no Unicode text either (JSON "\ud800"); query strings decode to well-formed text, so only JSON bodies carry one.
    for (const variant of badTextVariants(op, call, '\ud800').filter((v) => v.body)) await expectRefused(t, op, call, variant, /valid Unicode/);
    await settle();
    assert.deepEqual(await snapshotAccount(svc.service, t.accountId), before, 'nothing was written');
  });
}

test('the NUL walk reaches the strings the fuzzer found: q, notes, names, admin_notes, segment names, member emails, customer keys', () => {
  const reached = new Set<string>();
  for (const op of operations) {
    for (const [name] of Object.entries(op.query?.properties ?? {})) reached.add(name);
    for (const [name] of Object.entries(op.body?.properties ?? {})) reached.add(name);
    for (const name of pathParams(op)) reached.add(name);
  }
  for (const name of ['q', 'note', 'name', 'admin_notes', 'customers', 'key', 'text']) assert.ok(reached.has(name), name);
});

// ---------------------------------------------------------------- dates outside years 0001..9999

const OUT_OF_RANGE = ['0000-01-01', '0000-12-31T23:59:59Z', '9999-12-31T23:59:59-14:00', '0001-01-01T00:00:00+00:01'];
const EDGES = ['0001-01-01', '0001-01-01T00:00:00Z', '9999-12-31', '9999-12-31T23:59:59.999Z', '9999-12-31T09:59:59-14:00'];

/** Dot paths of every strict-date property of a schema (segment filters nest them). */
function datePaths(schema: Schema | undefined, path: string[] = []): string[][] {
  if (!schema) return [];
  if (schema.format === 'strict-date') return [path];
  return Object.entries(schema.properties ?? {}).flatMap(([key, inner]) => datePaths(inner, [...path, key]));
}

const dated = operations.filter((op) => datePaths(op.query as Schema).length + datePaths(op.body as Schema).length > 0);

test('there are date parameters to walk: from/to/since, get_facts and segment filters', () => {
  const names = dated.map((op) => op.name);
  for (const name of ['list_orders', 'list_stock_movements', 'get_facts', 'create_segment', 'update_segment']) assert.ok(names.includes(name), name);
});

for (const op of dated) {
  test(`${label(op)}: a date outside years 0001..9999 UTC is 400 validation_failed (MCP -32602); the edges are served`, async () => {
    const t = await tenant(svc);
    const call = await prepareCall(op, await createTargets(op, t), t);
    const before = await snapshotAccount(svc.service, t.accountId);
    for (const path of datePaths(op.query)) {
      for (const value of OUT_OF_RANGE)
        await expectRefused(t, op, call, { note: `${path.join('.')}=${value}`, query: { [path[0]]: value } }, /0001-9999/);
    }
    for (const path of datePaths(op.body)) {
      for (const value of OUT_OF_RANGE) {
        await expectRefused(t, op, call, { note: `${path.join('.')}=${value}`, body: setAt(call.body ?? {}, path, value) }, /0001-9999/);
      }
    }
    await settle();
    assert.deepEqual(await snapshotAccount(svc.service, t.accountId), before, 'nothing was written');
    if (op.method !== 'GET') return;
    for (const path of datePaths(op.query)) {
      for (const value of EDGES) {
        const edge = apply(op, call, { note: value, query: { [path[0]]: value } });
        if (op.rest !== false) {
          const res = await restCall(svc.url, op, t.key, edge);
          assert.equal(res.status, 200, `${op.name} ${path[0]}=${value}: ${res.text}`);
        } else {
          const result = await callTool(svc.url, t.key, op.name, edge.args);
          assert.equal(result.isError, false, `${op.name} ${path[0]}=${value}: ${JSON.stringify(result.structuredContent)}`);
        }
      }
    }
  });
}

/** A cursor the service would accept but for its date: sealed with the service's own key to the tenant's account (issue 27). */
const cursorOf = (t: Tenant, createdAt: string) => svc.service.services.cursors.scopedTo(t.accountId).seal(`${createdAt}|${crypto.randomUUID()}`);
const paged = operations.filter((op) => op.query?.properties && 'cursor' in op.query.properties);
/**
 * The events feed's cursor is a commit position, not (created_at, id) (EXTENSIONS 1): any created_at cursor is foreign
 * to it. The request log's is sealed to the key, not the account (EXTENSIONS 7): an account-sealed cursor is foreign too.
 * A shipment batch's items are paged by their place in the batch (EXTENSIONS 8): a created_at cursor is foreign to them.
 */
const keysetCursor = (op: Operation) => !['list_events', 'list_request_logs', 'list_shipment_batch_items'].includes(op.name);

for (const op of paged) {
  test(`${label(op)}: a cursor holding a created_at outside years 0001..9999 is 400 validation_failed (MCP -32602)`, async () => {
    const t = await tenant(svc);
    const call = await prepareCall(op, await createTargets(op, t), t);
    for (const createdAt of ['0000-01-01T00:00:00.000Z', '+010000-01-01T00:00:00.000Z', '9999-12-31T23:59:59-14:00']) {
      const variant = { note: `cursor at ${createdAt}`, query: { cursor: cursorOf(t, createdAt) } };
      const res = await restCall(svc.url, op, t.key, apply(op, call, variant));
      assertError(res, 400, 'validation_failed', variant.note);
      if (op.mcp !== false) {
        const mcp = await rpc(svc.url, t.key, toolCall(op.name, apply(op, call, variant).args));
        assert.equal(mcp.body.result?.structuredContent?.error ?? mcp.body.error?.code, 'VALIDATION_FAILED', `MCP ${variant.note}: ${mcp.text}`);
      }
    }
    if (!keysetCursor(op)) return;
    const edge = await restCall(svc.url, op, t.key, apply(op, call, { note: 'edge', query: { cursor: cursorOf(t, '9999-12-31T23:59:59.999Z') } }));
    assert.equal(edge.status, 200, edge.text);
  });
}

// ---------------------------------------------------------------- numbers JSON parsing turns into Infinity

const numeric = operations.filter((op) =>
  Object.values<Schema>((op.body?.properties ?? {}) as never).some((s) => ['number', 'integer'].some((type) => [s.type].flat().includes(type))),
);

test('there are numeric body fields to walk (prices, quantities, weights)', () => {
  for (const name of ['create_product', 'record_stock_movement', 'create_shipment'])
    assert.ok(
      numeric.some((op) => op.name === name),
      name,
    );
});

for (const op of numeric) {
  test(`${label(op)}: a number literal past the double range (1e400, -1e400) is 400 validation_failed (MCP -32602), never stored`, async () => {
    const t = await tenant(svc);
    const call = await prepareCall(op, await createTargets(op, t), t);
    const before = await snapshotAccount(svc.service, t.accountId);
    for (const [name, schema] of Object.entries<Schema>((op.body?.properties ?? {}) as never)) {
      if (!['number', 'integer'].some((type) => [schema.type].flat().includes(type))) continue;
      for (const literal of ['1e400', '-1e400']) {
        // JSON.stringify cannot write it: the raw text is spliced in, as a client in another language would send it.
        const raw = JSON.stringify({ ...(call.body ?? {}), [name]: '__N__' }).replace('"__N__"', literal);
        if (op.rest !== false) {
          const sent = await fetch(`${svc.url}${call.path}`, {
            method: op.method,
            headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
            body: raw,
          });
          const body = await sent.json();
          assert.equal(sent.status, 400, `${op.name} ${name}=${literal}: ${JSON.stringify(body)}`);
          assert.equal(body.error.code, 'validation_failed');
          assert.match(body.error.message, /finite/);
        }
        if (op.mcp !== false) {
          const args = JSON.stringify({ ...call.args, [name]: '__N__' }).replace('"__N__"', literal);
          const res = await rpc(svc.url, t.key, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${op.name}","arguments":${args}}}`);
          assert.equal(res.body.error?.code, -32602, `MCP ${op.name} ${name}=${literal}: ${res.text}`);
        }
      }
    }
    await settle();
    assert.deepEqual(await snapshotAccount(svc.service, t.accountId), before, 'nothing was written');
  });
}
