// Property-based fuzzing of every operation, generated from what the service
// publishes: each REST operation of the OpenAPI document (path, query, body,
// dry-run header) and each MCP tool's inputSchema from tools/list, with valid
// and hostile values (helpers/fuzz-arbitraries.ts). Whatever is sent:
//   - no 5xx, and over MCP no -32603;
//   - every REST error is {error: {code, message, scope?, details?}} with the
//     status its code implies; every 2xx matches the OpenAPI document;
//   - every MCP answer is a JSON-RPC response, a refusal is {error, reason},
//     a result matches the tool's outputSchema;
//   - no stack trace or SQL in any body; rate-limit headers on authenticated answers.
// CI (CI=true) uses a fixed seed; elsewhere a random one. The seed, the request
// count and a replay command are printed. FUZZ_RUNS scales the runs per operation.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ERROR_STATUS } from '../src/platform/contract/errors.ts';
import { startTestService, type TestService } from './helpers/harness.ts';
import { deref, resolveRef, validateResponse, type OpenApiDoc } from './helpers/openapi-validator.ts';
import { tenant, resourceFactories, sinkUrl, type Tenant } from './helpers/registry-fixtures.ts';
import { anyJson, body, toJsonText, toParam, value, NASTY_STRINGS, type FuzzContext } from './helpers/fuzz-arbitraries.ts';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : process.env.CI ? 20_261_123 : Math.floor(Math.random() * 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const ONLY = process.env.FUZZ_ONLY;
const REPLAY = `FUZZ_SEED=${SEED} ./node_modules/.bin/node --test test/fuzz.test.ts`;

const sent = { rest: 0, mcp: 0 };
/** Answers by status class, printed at the end: how deep the generated requests got. */
const answered: Record<string, number> = {};
const tally = (status: number) => (answered[`${String(status)[0]}xx`] = (answered[`${String(status)[0]}xx`] ?? 0) + 1);

// Set up before the tests are declared: one test per operation and per tool, read from what the service publishes.
const svc: TestService = await startTestService({ RATE_LIMIT_REST_PER_MINUTE: '100000000', RATE_LIMIT_MCP_PER_MINUTE: '100000000', WORKERS: '0' });
const doc = (await (await fetch(`${svc.url}/api/v1/openapi.json`)).json()) as OpenApiDoc;
const t: Tenant = await tenant(svc);
const other: Tenant = await tenant(svc);
const made: Record<string, string[]> = {};
for (const [kind, make] of Object.entries(resourceFactories)) made[kind] = [await make(t), await make(t), await make(other)];
const keys = { full: t.key, readOnly: await t.op.issueKey(t.accountId, { preset: 'read_only' }) };
const ctx: FuzzContext = {
  ids: Object.values(made).flat(),
  // Never a public address: fuzzing must not make the service call out of this machine.
  webhookUrls: [
    ...made.webhooks.map((id) => sinkUrl(t, id)),
    sinkUrl(t, crypto.randomUUID()),
    'https://127.0.0.1/hook',
    'https://[::127.0.0.1]/x',
    'https://10.0.0.1/hook',
    'https://localhost/hook',
    'http://127.0.0.1/hook',
    'https://user:pw@127.0.0.1/x',
    'ftp://127.0.0.1/x',
  ],
  resolve: (ref) => resolveRef(doc, ref),
};
process.stdout.write(`# fuzz seed ${SEED} (replay: ${REPLAY})\n`);

after(async () => {
  const classes = Object.entries(answered)
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  process.stdout.write(
    `# fuzz sent ${sent.rest} REST requests and ${sent.mcp} MCP requests (${sent.rest + sent.mcp} in all; HTTP ${classes}), seed ${SEED}\n`,
  );
  await svc.close();
});

const STACK_OR_SQL = [
  /\n\s+at\s/,
  /\bat (async )?\S+ \((file|node):/,
  /node:internal/,
  /\.(ts|js):\d+:\d+/,
  /syntax error at or near/i,
  /violates \w+( key)? constraint/i,
  /invalid input syntax for/i,
  /relation "[^"]+" does not exist/i,
  /\bSELECT\s.+\sFROM\s/i,
  /\bINSERT INTO\b/i,
  /\bUPDATE\s+\w+\s+SET\b/i,
  /\bDELETE FROM\b/i,
  /SQLSTATE|ERRCODE|pg_catalog|ErrnoError/,
];

function assertClean(text: string, where: string): void {
  for (const pattern of STACK_OR_SQL) assert.doesNotMatch(text, pattern, `${where}: a stack trace or SQL in the body`);
}

/** Runs one property with the run's seed; a failure names the seed and how to replay it. */
async function check<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, runs: number): Promise<void> {
  try {
    await fc.assert(fc.asyncProperty(arbitrary, predicate), {
      seed: SEED,
      numRuns: runs,
      path: process.env.FUZZ_PATH,
      endOnFailure: !process.env.FUZZ_SHRINK,
    });
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? `\nCause: ${((err as Error).cause as Error).message}` : '';
    throw new Error(`${(err as Error).message}${cause}\nReplay: FUZZ_ONLY=${name} ${REPLAY}`);
  }
}

// ---------------------------------------------------------------- REST, from the OpenAPI document

const KEY_CHOICE = fc.constantFrom('full', 'full', 'full', 'full', 'full', 'full', 'readOnly', 'none', 'bogus');
const QUERY_EXTRAS = fc.constantFrom(
  '',
  '',
  '',
  'unknown_param=1',
  'limit=1&limit=2',
  '%zz=1',
  'a[b]=1',
  `q=${'x'.repeat(3000)}`,
  'cursor=%00',
  'q=%ED%A0%80',
  'q=%FF',
  'limit=%',
);

interface RestOperation {
  name: string;
  method: string;
  template: string;
  parameters: any[];
  bodySchema: any | null;
  keyless: boolean;
}

function restOperations(): RestOperation[] {
  const list: RestOperation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      list.push({
        name: op.operationId,
        method: method.toUpperCase(),
        template,
        parameters: (op.parameters ?? []).map((p: any) => deref(doc, p)),
        bodySchema: op.requestBody ? deref(doc, op.requestBody).content['application/json'].schema : null,
        // `security: []`: a keyless route (the debug sink, the index), which counts no key's requests.
        keyless: Array.isArray(op.security) && op.security.length === 0,
      });
    }
  }
  return list;
}

/** A path segment; a lone surrogate goes out as the invalid UTF-8 a careless client would send. */
function pathSegment(value: string): string {
  return value.isWellFormed() ? encodeURIComponent(value) : `${encodeURIComponent(value.toWellFormed())}%ED%A0%80`;
}

/** A request for the operation: valid throughout, or mixed with hostile values. */
function requestFor(op: RestOperation, validOnly: boolean) {
  const inPath = op.parameters.filter((p) => p.in === 'path');
  const inQuery = op.parameters.filter((p) => p.in === 'query');
  const dryRun = op.parameters.find((p) => p.in === 'header' && p.name === 'X-Merx-Dry-Run');
  const idempotent = op.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
  const field = (p: any) => value(p.schema, ctx, p.name, 0, validOnly);
  const path = fc.tuple(...inPath.map(field)).map((values) => {
    let concrete = op.template;
    inPath.forEach((p, i) => (concrete = concrete.replace(`{${p.name}}`, pathSegment(toParam(values[i])))));
    return concrete;
  });
  const required: string[] = inQuery.filter((p) => p.required && validOnly).map((p) => p.name);
  const model: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(inQuery.map((p) => [p.name, field(p)]));
  const query = fc.record(model, { requiredKeys: required as never[] });
  const noBody = fc.option(fc.constantFrom({ text: '{"x":1}', contentType: 'application/json' }), { freq: 8 });
  return fc.record({
    key: validOnly ? fc.constant('full') : KEY_CHOICE,
    path,
    query,
    extra: validOnly ? fc.constant('') : QUERY_EXTRAS,
    dryRun: dryRun ? fc.option(fc.constantFrom('1', 'true', 'yes', 'no', '', 'TRUE')) : fc.constant(null),
    // EXTENSIONS 2: a few keys reused across runs (replays and 409s), fresh ones, and malformed ones.
    idempotencyKey: idempotent
      ? fc.option(fc.oneof(fc.constantFrom('fuzz-1', 'fuzz-2', '', 'has space', 'x'.repeat(256), '~!'), fc.stringMatching(/^[!-~]{1,40}$/)), {
          freq: 3,
        })
      : fc.constant(null),
    body: op.bodySchema ? body(op.bodySchema, ctx, validOnly) : validOnly ? fc.constant(null) : noBody,
  });
}

async function sendRest(op: RestOperation, request: ReturnType<typeof requestFor> extends fc.Arbitrary<infer R> ? R : never) {
  const search = new URLSearchParams(Object.entries(request.query).map(([k, v]) => [k, toParam(v)])).toString();
  const qs = [search, request.extra].filter(Boolean).join('&');
  const url = `${svc.url}${request.path}${qs ? `?${qs}` : ''}`;
  const headers: Record<string, string> = {};
  const token = request.key === 'bogus' ? `merx_${'Z'.repeat(40)}` : request.key === 'none' ? null : keys[request.key];
  if (token) headers.authorization = `Bearer ${token}`;
  if (request.dryRun !== null) headers['x-merx-dry-run'] = request.dryRun;
  if (request.idempotencyKey !== null) headers['idempotency-key'] = request.idempotencyKey;
  // fetch cannot send a GET body; every other method gets what was generated.
  const payload = op.method === 'GET' ? undefined : request.body;
  if (payload?.contentType) headers['content-type'] = payload.contentType;
  sent.rest++;
  const res = await fetch(url, { method: op.method, headers, body: payload ? payload.text : undefined });
  tally(res.status);
  return { res, text: await res.text(), url, authenticated: request.key === 'full' || request.key === 'readOnly' };
}

const operations = restOperations();
test('the OpenAPI document lists the operations to fuzz', () => assert.ok(operations.length >= 25, `${operations.length}`));

for (const op of operations.filter((o) => !ONLY || o.name === ONLY)) {
  test(`REST ${op.name} (${op.method} ${op.template}): every generated request is answered in the contract shape, never 5xx`, async () => {
    await check(
      op.name,
      fc.oneof(requestFor(op, true), requestFor(op, false)),
      async (request) => {
        const { res, text, url, authenticated } = await sendRest(op, request);
        const where = `${op.method} ${url.slice(0, 300)} -> ${res.status} ${text.slice(0, 500)}`;
        assert.ok(res.status < 500, `${where}: a 5xx`);
        assert.ok(res.headers.get('x-deploy-sha'), `${where}: X-Deploy-SHA`);
        assertClean(text, where);
        // JSON, not JSON Lines (an export's application/x-ndjson is validated by its media type below).
        const isJson = /^application\/([\w.-]+\+)?json\b/.test(res.headers.get('content-type') ?? '');
        const json = isJson && text ? JSON.parse(text) : undefined;
        if (res.status >= 400) {
          assert.deepEqual(Object.keys(json ?? {}), ['error'], `${where}: the error shape`);
          const extra = Object.keys(json.error).filter((k) => !['code', 'message', 'scope', 'details'].includes(k));
          assert.deepEqual(extra, [], `${where}: only code, message, scope, details`);
          assert.equal(ERROR_STATUS[json.error.code as keyof typeof ERROR_STATUS], res.status, `${where}: the status of ${json.error.code}`);
          assert.equal(typeof json.error.message, 'string', where);
        } else if (res.headers.get('content-type')) {
          const outcome = validateResponse(doc, op.method, op.template, res.status, json, res.headers.get('content-type')!);
          assert.ok(outcome.valid, `${where}: does not match the document: ${outcome.errors.join('; ')}`);
        }
        // What the HTTP parser (431, 408) or the router (unknown route, 405, a malformed URL) refuses never reaches the key check.
        const refusedByRouter = /^no route|^the URL is malformed|^a path parameter is too long/.test(json?.error?.message ?? '');
        const routed = !refusedByRouter && ![405, 408, 431].includes(res.status);
        if (authenticated && res.status !== 401 && routed && !op.keyless) {
          assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/, `${where}: X-RateLimit-Remaining`);
        }
      },
      RUNS,
    );
  });
}

// ---------------------------------------------------------------- MCP, from each tool's inputSchema

async function rpc(payload: string, key: string | null = keys.full) {
  sent.mcp++;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${svc.url}/api/mcp`, { method: 'POST', headers, body: payload });
  tally(res.status);
  const text = await res.text();
  return { res, text, json: text ? JSON.parse(text) : undefined };
}

const RPC_ERRORS = [-32700, -32600, -32601, -32602, -32000];

function assertRpcResponse(response: any, where: string, validateOutput?: (v: unknown) => boolean): void {
  assert.equal(response?.jsonrpc, '2.0', `${where}: a JSON-RPC response`);
  if (response.error) {
    assert.ok(RPC_ERRORS.includes(response.error.code), `${where}: JSON-RPC error ${response.error.code}`);
    assert.equal(typeof response.error.message, 'string', where);
    return;
  }
  const result = response.result;
  if (!result || !('isError' in result)) return;
  assert.equal(result.content?.[0]?.text, JSON.stringify(result.structuredContent), `${where}: content[0].text is the structuredContent`);
  if (result.isError) {
    assert.deepEqual(Object.keys(result.structuredContent).sort(), ['error', 'reason'], `${where}: a refusal is {error, reason}`);
    assert.match(result.structuredContent.error, /^[A-Z_]+$/, where);
  } else if (validateOutput) {
    assert.ok(validateOutput(result.structuredContent), `${where}: structuredContent does not match the outputSchema`);
  }
}

const tools: any[] = (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).json.result.tools;
test('tools/list lists the tools to fuzz', () => assert.ok(tools.length >= 25, `${tools.length}`));
const ajv = new Ajv({ strict: false, logger: false });
(addFormatsModule as unknown as (ajv: Ajv) => Ajv)(ajv);
ajv.addFormat('strict-date', true);

for (const tool of tools.filter((x) => !ONLY || x.name === ONLY)) {
  test(`MCP ${tool.name}: tools/call with arguments generated from its inputSchema is answered in the contract shape, never -32603 or 5xx`, async () => {
    const validateOutput = ajv.compile(tool.outputSchema);
    const args = fc.oneof(
      { weight: 6, arbitrary: value(tool.inputSchema, ctx, '', 0, true) },
      { weight: 6, arbitrary: value(tool.inputSchema, ctx) },
      { weight: 1, arbitrary: anyJson },
    );
    const message = fc.record({
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 })),
      args,
      key: fc.constantFrom<string | null>(keys.full, keys.full, keys.full, keys.full, keys.readOnly, null),
    });
    await check(
      tool.name,
      message,
      async ({ id, args: generated, key }) => {
        const payload = toJsonText({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: generated } });
        const { res, text, json } = await rpc(payload, key);
        const where = `tools/call ${tool.name} ${payload.slice(0, 400)} -> ${res.status} ${text.slice(0, 500)}`;
        assert.ok(res.status < 500, `${where}: a 5xx`);
        assertClean(text, where);
        if (!key) return assert.equal(res.status, 401, where);
        assert.match(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/, `${where}: X-RateLimit-Remaining`);
        assert.ok([200, 400].includes(res.status), where);
        assertRpcResponse(json, where, validateOutput);
      },
      Math.ceil(RUNS * 0.8),
    );
  });
}

test('MCP: any JSON-RPC envelope (odd methods, params, ids, batches, raw text) gets a JSON-RPC answer, never -32603 or 5xx', async () => {
  if (ONLY && ONLY !== 'mcp_envelope') return;
  const method = fc.constantFrom(
    'initialize',
    'ping',
    'tools/list',
    'tools/call',
    'notifications/initialized',
    'resources/list',
    '',
    'tools/call\u0000',
    'x'.repeat(300),
  );
  const messageArb = fc.record(
    {
      jsonrpc: fc.constantFrom<unknown>('2.0', '2.0', '2.0', '1.0', 2, null),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), anyJson),
      method,
      params: anyJson,
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  );
  const payload = fc.oneof(
    { weight: 4, arbitrary: messageArb.map((m) => toJsonText(m)) },
    { weight: 2, arbitrary: fc.array(messageArb, { minLength: 0, maxLength: 22 }).map((m) => toJsonText(m)) },
    { weight: 1, arbitrary: fc.constantFrom(...NASTY_STRINGS, '{', '[1,2', '{"jsonrpc":"2.0","method":"ping","id":1e400}') },
  );
  await check(
    'mcp_envelope',
    payload,
    async (text) => {
      const { res, text: answer, json } = await rpc(text);
      const where = `MCP ${text.slice(0, 300)} -> ${res.status} ${answer.slice(0, 500)}`;
      assert.ok([200, 202, 400].includes(res.status), `${where}: status`);
      assertClean(answer, where);
      if (res.status === 202) return assert.equal(answer, '', where);
      for (const response of [json].flat()) assertRpcResponse(response, where);
    },
    RUNS * 4,
  );
});
