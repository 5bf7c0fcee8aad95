// Issue 27: JSON nested 10,000 levels deep (about 60 KB, far under the 1 MB
// body limit) cost 0.1-0.8 s of CPU and 100-250 MB per request and ended in
// a 500. Past MAX_JSON_DEPTH (64) levels the raw text is refused with 400
// validation_failed before anything parses or walks it: as a REST body, an
// operator API body and MCP tool arguments; 64 levels still pass.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startTestService, http, freshTenant, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { rpc } from './helpers/mcp.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../src/platform/contract/json-depth.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

/** `levels` arrays inside one another: `[[...]]`. */
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** An object whose field "x" holds arrays nested so that the whole text is `levels` deep. */
const deepObject = (levels: number) => `{"x":${nested(levels - 1)}}`;
/** A tools/call whose arguments are `levels` deep. */
const deepToolCall = (levels: number, id = 1) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"list_orders","arguments":${deepObject(levels)}}}`;

const restPost = (key: string, rawBody: string) =>
  http(svc.url, 'POST', '/api/v1/webhooks', { token: key, rawBody, headers: { 'content-type': 'application/json' } });
const operatorPost = (rawBody: string) =>
  http(svc.url, 'POST', '/admin/api/accounts', { token: ADMIN_TOKEN, rawBody, headers: { 'content-type': 'application/json' } });

test('the depth scan counts brackets outside strings only, and stops past the bound', () => {
  assert.equal(nestsDeeperThan(nested(64), 64), false);
  assert.equal(nestsDeeperThan(nested(65), 64), true);
  assert.equal(nestsDeeperThan(`{"a":"${'['.repeat(1000)}","b":[1]}`, 2), false, 'brackets inside a string do not count');
  assert.equal(nestsDeeperThan(`{"a":"\\"${'['.repeat(10)}","b":[1]}`, 2), false, 'an escaped quote does not end the string');
  assert.equal(nestsDeeperThan(`{"a":"\\\\",${'['.repeat(3)}`, 3), true, 'an escaped backslash does end it before the quote');
  assert.equal(nestsDeeperThan('[1],[2],[3]', 1), false, 'siblings are not nesting');
});

test('10,000 levels as a REST body: 400 validation_failed at once, naming the bound', async () => {
  const { key } = await freshTenant(svc.url);
  const body = deepObject(10_000);
  assert.ok(body.length > 19_000 && body.length < 1024 * 1024);
  const started = performance.now();
  const res = await restPost(key, body);
  const ms = performance.now() - started;
  const error = assertError(res, 400, 'validation_failed');
  assert.equal(error.details.reason, 'json_too_deep');
  assert.equal(error.details.max_depth, MAX_JSON_DEPTH);
  assert.match(error.message, /deeper than 64 levels/);
  assert.ok(ms < 1000, `answered in ${ms.toFixed(0)} ms`);
});

test('64 levels pass the depth check (the body is then refused for what it says, not for its depth); 65 do not', async () => {
  const { key } = await freshTenant(svc.url);
  const at = await restPost(key, deepObject(MAX_JSON_DEPTH));
  const error = assertError(at, 400, 'validation_failed');
  assert.notEqual(error.details?.reason, 'json_too_deep', at.text);
  const past = await restPost(key, deepObject(MAX_JSON_DEPTH + 1));
  assert.equal(assertError(past, 400, 'validation_failed').details.reason, 'json_too_deep');
});

test('10,000 levels as an operator API body: 400 validation_failed; 64 levels pass the depth check', async () => {
  const res = await operatorPost(deepObject(10_000));
  assert.equal(assertError(res, 400, 'validation_failed').details.reason, 'json_too_deep');
  const at = await operatorPost(deepObject(MAX_JSON_DEPTH));
  assert.notEqual(assertError(at, 400, 'validation_failed').details?.reason, 'json_too_deep', at.text);
});

test('10,000 levels as MCP tool arguments: HTTP 400 with JSON-RPC -32602 before parsing; 64 levels of arguments pass, 65 are -32602', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await rpc(svc.url, key, deepToolCall(10_000));
  assert.equal(res.status, 400, res.text.slice(0, 300));
  assert.equal(res.body.error.code, -32602);
  assert.deepEqual(res.body.error.data, { reason: 'json_too_deep', max_depth: MAX_JSON_DEPTH });
  assert.match(res.body.error.message, /deeper than 64 levels/);
  // A batch of one deep call is refused the same way.
  const batch = await rpc(svc.url, key, `[${deepToolCall(10_000)}]`);
  assert.equal(batch.status, 400);
  assert.equal(batch.body.error.code, -32602);

  const at = await rpc(svc.url, key, deepToolCall(MAX_JSON_DEPTH));
  assert.equal(at.status, 200, at.text);
  assert.equal(at.body.error.code, -32602);
  assert.doesNotMatch(at.body.error.message, /deeper than/, 'refused for an unknown argument, not for its depth');
  assert.match(at.body.error.message, /unknown argument "x"/);
  // In a batch the arguments sit one level deeper in the text; they are still held to 64 levels of their own.
  const inBatch = await rpc(svc.url, key, `[${deepToolCall(MAX_JSON_DEPTH)}]`);
  assert.equal(inBatch.status, 200, inBatch.text);
  assert.match(inBatch.body[0].error.message, /unknown argument "x"/);
  const past = await rpc(svc.url, key, deepToolCall(MAX_JSON_DEPTH + 1));
  assert.equal(past.body.error.code, -32602);
  assert.match(past.body.error.message, /deeper than 64 levels/);
});

test('50 deep requests across REST, the operator API and MCP: all 400, fast, and the process stays small', async () => {
  const { key } = await freshTenant(svc.url);
  const body = deepObject(10_000);
  // What stays held after a full collection, not the RSS: this process also runs the service's database (PGlite), and
  // its RSS moves by tens of megabytes with when the collector last ran, whatever the requests did.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const held = () => (gc(), process.memoryUsage().heapUsed + process.memoryUsage().external);
  const heldBefore = held();
  const started = performance.now();
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) {
    const res = i % 3 === 0 ? await restPost(key, body) : i % 3 === 1 ? await operatorPost(body) : await rpc(svc.url, key, deepToolCall(10_000, i));
    statuses.push(res.status);
  }
  const ms = performance.now() - started;
  const grownMb = (held() - heldBefore) / 1024 / 1024;
  assert.deepEqual(new Set(statuses), new Set([400]));
  assert.ok(grownMb < 20, `the memory held grew by ${grownMb.toFixed(0)} MB`);
  assert.ok(ms < 10_000, `50 requests took ${ms.toFixed(0)} ms`);
  console.log(`# 50 deep requests: ${ms.toFixed(0)} ms in all, the memory held grew by ${grownMb.toFixed(1)} MB`);
});
