// merx-client as a customer gets it: `npm pack` of packages/client, installed
// from the tarball into throwaway projects outside this repository (one on the
// machine's own Node, 20 here, one on the Node this suite runs on), imported
// from plain JavaScript, typechecked from plain JavaScript, and used against
// the running service: typed calls, paging, and a real delivery verified.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, freshTenant, http, type TestService } from './helpers/harness.ts';
import { createWebhook, sinkCaptures, eventually } from './helpers/webhooks.ts';

const CLIENT_DIR = path.join(import.meta.dirname, '../packages/client');
const TSC = path.join(CLIENT_DIR, 'node_modules/.bin/tsc');
const NODE24 = process.execPath;
/** npm runs the package's build on the Node this suite runs on (the repository's pinned Node). */
const PATH_WITH_NODE24 = `${path.dirname(NODE24)}${path.delimiter}${process.env.PATH ?? ''}`;

/** The machine's own Node: the first `node` on PATH that is not a node_modules copy. */
function machineNode(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (!dir.includes('node_modules') && fs.existsSync(candidate) && fs.realpathSync(candidate) !== fs.realpathSync(NODE24)) return candidate;
  }
  return '/usr/bin/node';
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, timeout: 170_000, env: { ...process.env, PATH: PATH_WITH_NODE24, ...options.env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let svc: TestService;
let work: string;
let tarball: string;
let env: Record<string, string>;

const CUSTOMER_SCRIPT = `
import { createMerxClient, allPages } from 'merx-client';
import { verifyWebhook, verifyStandardWebhook, constructEvent } from 'merx-client/webhooks';

const merx = createMerxClient({ baseUrl: process.env.MERX_URL, apiKey: process.env.MERX_KEY });
const page = await merx.GET('/api/v1/orders', { params: { query: { limit: 2, status: 'new' } } });
const first = page.data.data[0];
const one = await merx.GET('/api/v1/orders/{id}', { params: { path: { id: first.id } } });
const missing = await merx.GET('/api/v1/orders/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
const preview = await merx.PATCH('/api/v1/orders/{id}', {
  params: { path: { id: first.id }, header: { 'X-Merx-Dry-Run': '1' } },
  body: { admin_notes: 'from the client' },
});
let paged = 0;
for await (const order of allPages((cursor) => merx.GET('/api/v1/orders', { params: { query: { limit: 2, cursor } } }))) paged += order.id ? 1 : 0;

const delivery = JSON.parse(process.env.MERX_DELIVERY);
const secret = process.env.MERX_SECRET;
const standard = delivery.headers['webhook-id']
  ? verifyStandardWebhook(delivery.body, { id: delivery.headers['webhook-id'], timestamp: delivery.headers['webhook-timestamp'], signature: delivery.headers['webhook-signature'] }, secret, 1e9)
  : null;
let refused = null;
try { constructEvent(delivery.body + ' ', delivery.headers, secret, { toleranceSec: 1e9 }); } catch (err) { refused = err.reason; }
console.log(JSON.stringify({
  node: process.version,
  listed: page.data.data.length,
  same: one.data.data.id === first.id,
  missing: [missing.response.status, missing.error.error.code],
  preview: [preview.response.status, preview.data.dry_run, preview.data.changes],
  paged,
  verdict: verifyWebhook(delivery.body, delivery.headers, secret, { toleranceSec: 1e9 }),
  standard,
  event: constructEvent(delivery.body, delivery.headers, secret, { toleranceSec: 1e9 }).event,
  refused,
}));
`;

// Typechecked as a customer's editor would (// @ts-check): right calls pass, wrong ones are caught.
const TYPED_OK = `// @ts-check
import { createMerxClient } from 'merx-client';
import { verifyWebhook } from 'merx-client/webhooks';
const merx = createMerxClient({ baseUrl: 'http://localhost:3000', apiKey: 'merx_x' });
const { data } = await merx.GET('/api/v1/orders', { params: { query: { status: 'new', limit: 5 } } });
/** @type {string | undefined} */
const status = data?.data[0]?.status;
/** @type {boolean} */
const valid = verifyWebhook('{}', { 'x-merx-signature': 't=1,v1=00' }, 'secret').valid;
console.log(status, valid);
`;
const TYPED_WRONG = `// @ts-check
import { createMerxClient } from 'merx-client';
import { verifyWebhook } from 'merx-client/webhooks';
const merx = createMerxClient({ baseUrl: 'http://localhost:3000', apiKey: 'merx_x' });
await merx.GET('/api/v1/orders', { params: { query: { status: 'lost' } } });
await merx.GET('/api/v1/no-such-route', {});
verifyWebhook('{}', { 'x-merx-signature': 't=1' }, 42);
`;
const TSCONFIG = JSON.stringify({
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    allowJs: true,
    checkJs: true,
    noEmit: true,
    strict: true,
    types: [],
  },
  include: ['*.js', '*.mjs'],
});

before(async () => {
  svc = await startTestService();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-client-'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: CLIENT_DIR });
  assert.equal(packed.code, 0, packed.stderr);
  tarball = path.join(work, JSON.parse(packed.stdout)[0].filename);

  const t = await freshTenant(svc.url, { scopes: ['orders:read', 'orders:write', 'webhooks:read', 'webhooks:write'] });
  for (let i = 0; i < 5; i++) await t.op.checkout(t.accountId);
  // A real delivery: a subscription on the service's own debug sink, and its test event.
  const own = new URL(svc.service.services.config.publicBaseUrl);
  const made = await createWebhook(svc.url, t.key, { url: `${own.protocol}//${own.hostname}/api/webhooks/sink`, events: ['order.created'] });
  assert.equal((await http(svc.url, 'POST', `/api/v1/webhooks/${made.data.id}/test`, { token: t.key })).status, 200);
  const [capture] = await eventually(async () => (await sinkCaptures(svc.url, made.data.id)).slice(0, 1), 'the sink capture');
  env = {
    MERX_URL: svc.url,
    MERX_KEY: t.key,
    MERX_SECRET: made.secret,
    MERX_DELIVERY: JSON.stringify({ headers: capture.headers, body: capture.body }),
  };
});

after(async () => {
  await svc.close();
  fs.rmSync(work, { recursive: true, force: true });
});

test('the tarball holds built JavaScript, declarations and the OpenAPI document, no TypeScript sources, and declares its runtime dependency', () => {
  const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();
  for (const file of [
    'dist/index.js',
    'dist/index.d.ts',
    'dist/webhooks.js',
    'dist/webhooks.d.ts',
    'dist/schema.d.ts',
    'dist/openapi.json',
    'package.json',
  ]) {
    assert.ok(listing.includes(`package/${file}`), `${file} is packed`);
  }
  assert.deepEqual(
    listing.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts')),
    [],
    'no .ts sources',
  );
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
  assert.ok(manifest.dependencies['openapi-fetch'], 'openapi-fetch is a declared dependency');
  assert.deepEqual(Object.keys(manifest.exports).sort(), ['.', './openapi.json', './package.json', './webhooks']);
});

for (const project of [
  { name: "a plain Node project on the machine's own Node", node: machineNode, type: 'commonjs', file: 'main.mjs' },
  { name: 'an ESM project on the current Node', node: () => NODE24, type: 'module', file: 'main.js' },
]) {
  test(`installed from the tarball into ${project.name}: imports, calls the API with types, verifies a real delivery`, async () => {
    const dir = fs.mkdtempSync(path.join(work, 'customer-'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'customer', version: '1.0.0', private: true, type: project.type }));
    const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: dir });
    assert.equal(install.code, 0, install.stderr);
    fs.writeFileSync(path.join(dir, project.file), CUSTOMER_SCRIPT);
    const node = project.node();
    const result = await run(node, [project.file], { cwd: dir, env });
    assert.equal(result.code, 0, result.stderr);
    const out = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.match(out.node, /^v(2\d|[3-9]\d)\./, 'Node 20 or newer');
    if (project.type === 'commonjs') assert.notEqual(out.node, process.version, "a different Node than the suite's");
    assert.equal(out.listed, 2);
    assert.equal(out.same, true);
    assert.deepEqual(out.missing, [404, 'not_found']);
    assert.deepEqual(out.preview, [200, true, { admin_notes: 'from the client' }]);
    assert.equal(out.paged, 5);
    assert.deepEqual(out.verdict, { valid: true, scheme: 'merx', reason: 'ok' });
    if (out.standard !== null) assert.equal(out.standard, true, 'the Standard Webhooks headers verify too');
    assert.equal(out.event, 'test');
    assert.equal(out.refused, 'signature_mismatch');

    if (project.type === 'commonjs') {
      // require() of the ESM package from CommonJS (Node 20.19+ loads ES modules synchronously).
      fs.writeFileSync(
        path.join(dir, 'require.cjs'),
        "const w = require('merx-client/webhooks'); console.log(typeof w.verifyWebhook, typeof require('merx-client').createMerxClient);",
      );
      const required = await run(node, ['require.cjs'], { cwd: dir });
      assert.equal(required.code, 0, required.stderr);
      assert.equal(required.stdout.trim(), 'function function');
    }
  });
}

test('types reach plain JavaScript: // @ts-check accepts right calls and catches a wrong enum value, an unknown path and a wrong argument', async () => {
  const dir = fs.mkdtempSync(path.join(work, 'typed-'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'typed', version: '1.0.0', private: true, type: 'module' }));
  assert.equal((await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: dir })).code, 0);
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), TSCONFIG);
  fs.writeFileSync(path.join(dir, 'ok.js'), TYPED_OK);
  const ok = await run(TSC, ['-p', dir], { cwd: dir });
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  fs.writeFileSync(path.join(dir, 'wrong.js'), TYPED_WRONG);
  const wrong = await run(TSC, ['-p', dir], { cwd: dir });
  assert.notEqual(wrong.code, 0);
  const errors = wrong.stdout.split('\n').filter((line) => line.startsWith('wrong.js('));
  assert.equal(errors.length, 3, wrong.stdout);
  assert.match(errors[0], /"lost"/);
  assert.match(errors[1], /no-such-route/);
  assert.match(errors[2], /number/);
});
