// Issue 28: every shell command in README.md and docs/ works as written
// against `npm start` (getting-started's webhook example once named a host
// that does not resolve). Each ```sh block is either run here, against the
// service started as npm start starts it, with the variables a reader has by
// then (KEY, TOKEN, ACCOUNT from the banner; ORDER, HOOK, ... where the page
// says what they are) and http://localhost:3000 replaced by its address; or
// listed with the reason it cannot run here. A new block fails the test until
// it is one or the other.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startLikeNpmStart, type StartedLikeNpmStart } from './helpers/npm-start.ts';

const ROOT = path.join(import.meta.dirname, '..');
const FILES = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

interface Block {
  file: string;
  text: string;
}

function shellBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of FILES) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/^```(sh|bash|shell)\n([\s\S]*?)^```/gm)) blocks.push({ file, text: m[2] });
  }
  return blocks;
}

type Check = { run: true; expect: RegExp; cwd?: 'repo'; forever?: boolean } | { run: false; why: string };

/** Keyed by file and the block's first line. */
const CHECKS: Record<string, Check> = {
  'README.md: npm install && npm start     # installs (and builds the operator console), then runs the service on embedded PGlite (./data) and prints its URLs, the operator token and a demo API key':
    { run: false, why: 'starts the service: this test starts it the same way (node src/main.ts, a fresh DATA_DIR)' },
  'README.md: B=http://localhost:3000': { run: true, expect: /"status":"delivered"/ },
  'docs/getting-started.md: npm install && npm start': { run: false, why: 'starts the service: this test starts it the same way' },
  'docs/getting-started.md: TOKEN=merx_admin_...   # the operator token': { run: true, expect: /"key":"merx_[A-Za-z0-9]+"/ },
  'docs/getting-started.md: KEY=merx_...': { run: true, expect: /^\{"data":\[\{"id":/ },
  'docs/getting-started.md: npm pack ./packages/client --pack-destination /tmp   # in the Merx repository: writes /tmp/merx-client-1.0.0.tgz, nothing in the tree':
    {
      run: false,
      why: "installs into a project of the reader's (/path/to/merx); test/client-package.test.ts packs and installs the tarball in throwaway projects",
    },
  'docs/getting-started.md: npx merx listen --forward-to http://localhost:4000/hooks --key $KEY    # --events order.created,order.status_changed to pick; --since 2026-11-01 to replay':
    {
      run: true,
      cwd: 'repo',
      forever: true,
      expect: /Ready\. Ctrl-C stops\./,
    },
  'docs/getting-started.md: B=http://localhost:3000': {
    run: true,
    expect: /"url":"http:\/\/localhost:\d+\/api\/webhooks\/sink\?id=[0-9a-f-]{36}"[^]*"secret":"[0-9a-f]{64}"/,
  },
  'docs/getting-started.md: npx @modelcontextprotocol/inspector --cli http://localhost:3000/api/mcp --transport http \\': {
    run: true,
    cwd: 'repo',
    expect: /list_orders[^]*"content"/,
  },
  'docs/integrator-safety.md: B=http://localhost:3000': { run: true, expect: /^$/ },
  'docs/integrator-safety.md: # first read, then poll with the stored cursor': {
    run: true,
    expect: /"next_cursor"[^]*"next_cursor"[^]*"next_cursor"/,
  },
  'docs/integrator-safety.md: curl -s -X POST $B/api/v1/shipments -H "Authorization: Bearer $KEY" -H \'content-type: application/json\' \\': {
    run: true,
    expect: /HTTP\/1\.1 201/,
  },
  'docs/integrator-safety.md: # read, keep the ETag': { run: true, expect: /^etag: "[^"]+"[^]*HTTP\/1\.1 412[^]*precondition_failed[^]*200\s*$/im },
  'docs/integrator-safety.md: curl -s -X POST $B/api/v1/webhooks/$HOOK/rotate-secret -H "Authorization: Bearer $KEY" \\': {
    run: true,
    expect: /"standard_secret":"whsec_/,
  },
  'docs/integrator-safety.md: curl -s -X POST $B/api/v1/webhooks/$HOOK/verify-signature -H "Authorization: Bearer $KEY" -H \'content-type: application/json\' \\':
    {
      run: true,
      expect: /"valid":true,"scheme":"merx","diagnosis":"ok"/,
    },
  'docs/exports.md: B=http://localhost:3000': { run: true, expect: /^\s*\d+\s*\n\{"data":\[[^]*"next_cursor":"/ },
  'docs/exports.md: curl -s --compressed -H "Authorization: Bearer $KEY" "http://localhost:3000/api/v1/exports/orders?format=csv&status=new" -o new-orders.csv':
    {
      run: true,
      expect: /^id,number,order_number,status,[^\n]*customer\.name[^]*\r\n[0-9a-f-]{36},/,
    },
  'docs/mcp.md: curl -s -X POST http://localhost:3000/admin/api/accounts/$ACCOUNT/keys -H "Authorization: Bearer $TOKEN" \\': {
    run: true,
    expect: /"key":"merx_/,
  },
  'docs/mcp.md: claude mcp add --transport http merx https://merx.example.com/api/mcp --header "Authorization: Bearer $MERX_KEY"': {
    run: false,
    why: "configures Claude Code (not installed here) for a deployment at the reader's own host",
  },
  'docs/mcp.md: npx @modelcontextprotocol/inspector --cli http://localhost:3000/api/mcp --transport http \\': {
    run: true,
    cwd: 'repo',
    expect: /"tools"[^]*"content"/,
  },
  'docs/operations.md: pg_dump --format=custom --file=merx-$(date +%F).dump "$DATABASE_URL"       # a consistent snapshot, online': {
    run: false,
    why: "backs up and restores the operator's own PostgreSQL (a destructive restore)",
  },
  'docs/operations.md: # two instances on one PostgreSQL and one Redis': {
    run: false,
    why: 'a production layout: hosts db and cache, live couriers, two long-running servers',
  },
  'docs/shipping-a-day.md: B=http://localhost:3000': { run: true, expect: /^\{"would_ship":[1-9]\d*,"would_fail":\[/ },
  'docs/shipping-a-day.md: BATCH=$(curl -s -X POST $B/api/v1/shipment-batches -H "Authorization: Bearer $KEY" -H \'content-type: application/json\' \\':
    {
      run: true,
      expect: /^\{"id":"[0-9a-f-]{36}","state":"done","total":20,"succeeded":[1-9]\d*,/,
    },
  'docs/shipping-a-day.md: curl -s -o labels.pdf -w \'%{http_code} %{content_type}\\n\' $B/api/v1/shipment-batches/$BATCH/labels -H "Authorization: Bearer $KEY"':
    {
      run: true,
      expect: /^200 application\/pdf$/m,
    },
  'docs/shipping-a-day.md: curl -s "$B/api/v1/shipment-batches/$BATCH/items?status=failed&limit=200" -H "Authorization: Bearer $KEY" \\': {
    run: true,
    expect: /^\d+\n/,
  },
  'docs/webhooks.md: npx merx listen --forward-to http://localhost:4000/hooks --key $KEY': {
    run: true,
    cwd: 'repo',
    forever: true,
    expect: /Ready\. Ctrl-C stops\./,
  },
};

const keyOf = (b: Block) => `${b.file}: ${b.text.split('\n')[0]}`;

let svc: StartedLikeNpmStart;
let work: string;
let env: Record<string, string>;

before(async () => {
  svc = await startLikeNpmStart(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {});
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-docs-'));
  const api = async (method: string, p: string, token: string, body?: unknown) => {
    const res = await fetch(svc.base + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  // What the integrator-safety page's reader holds by then: an order without a waybill, a cursor of the feed, a
  // subscription (here on the debug sink), and what a receiver saw of one delivery (headers, raw body in body.json).
  const orders = await api('GET', '/api/v1/orders?status=new&limit=5', svc.key);
  // The demo orders were seeded without events: one change gives the feed something to hand out.
  await api('PATCH', `/api/v1/orders/${orders.body.data[2].id}`, svc.key, { admin_notes: 'docs walk' });
  const feed = await api('GET', '/api/v1/events?limit=1', svc.key);
  assert.ok(feed.body.next_cursor, JSON.stringify(feed.body));
  const hook = await api('POST', '/api/v1/webhooks', svc.key, { url: `${svc.base}/api/webhooks/sink`, events: ['order.updated'] });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  const sent = await api('POST', `/api/v1/webhooks/${hook.body.data.id}/test`, svc.key);
  assert.equal(sent.body.data?.status, 'delivered', JSON.stringify(sent.body));
  const [capture] = (await api('GET', `/admin/api/webhooks/${hook.body.data.id}/sink`, svc.token)).body.data;
  // Ship a day's orders: BATCH is "the batch's id from step 2", a finished batch (here of five new orders past the ones the README and integrator-safety walks use).
  const later = await api('GET', '/api/v1/orders?status=new&limit=10', svc.key);
  const batch = await api('POST', '/api/v1/shipment-batches', svc.key, {
    items: later.body.data.slice(5).map((o: { id: string }) => ({ order_id: o.id })),
  });
  assert.equal(batch.status, 202, JSON.stringify(batch.body));
  for (let i = 0; !(await api('GET', `/api/v1/shipment-batches/${batch.body.data.id}`, svc.key)).body.data.finished_at; i++) {
    assert.ok(i < 600, 'the docs batch finishes');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  fs.writeFileSync(path.join(work, 'body.json'), capture.body);
  env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith('NODE_TEST')) as [string, string][]),
    PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
    ORDER: orders.body.data[1].id, // the README walk takes the first
    CURSOR: feed.body.next_cursor,
    HOOK: hook.body.data.id,
    SIG: capture.headers['x-merx-signature'],
    TS: capture.headers['x-merx-timestamp'],
    EVENT: capture.headers['x-merx-event-id'],
    MERX_KEY: svc.key,
    // `merx listen` without --base-url follows the server running from this DATA_DIR, as in a reader's clone.
    DATA_DIR: svc.dataDir,
    B: svc.base, // integrator-safety: "every example below uses B for the base URL"
    BATCH: batch.body.data.id,
  };
});

after(async () => {
  await svc?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The block as a reader runs it: the placeholders they were told to fill, filled; the service where it runs. */
function asRun(text: string): string {
  return text
    .replace(/^KEY=merx_\.\.\./m, `KEY=${svc.key}`)
    .replace(/^TOKEN=merx_admin_\.\.\./m, `TOKEN=${svc.token}`)
    .replace(/^ACCOUNT=3f0c\.\.\./m, `ACCOUNT=${svc.accountId}`)
    .replaceAll('http://localhost:3000', svc.base);
}

test('every shell block of README.md and docs/ is either run below or listed with the reason it cannot run here', () => {
  const unlisted = shellBlocks()
    .map(keyOf)
    .filter((k) => !(k in CHECKS));
  assert.deepEqual(unlisted, [], 'add each new block to CHECKS');
  const gone = Object.keys(CHECKS).filter((k) => !shellBlocks().some((b) => keyOf(b) === k));
  assert.deepEqual(gone, [], 'CHECKS names blocks the docs no longer have');
});

// In document order: a page's later blocks use what its earlier ones did (the README walk ships an order).
for (const block of shellBlocks()) {
  const check = CHECKS[keyOf(block)];
  if (!check || !check.run) continue;
  test(`${keyOf(block).slice(0, 110)} runs as written`, () => {
    const script = `set -e -o pipefail\nexport KEY=${svc.key} TOKEN=${svc.token} ACCOUNT=${svc.accountId}\n${asRun(block.text)}`;
    const file = path.join(work, 'block.sh');
    fs.writeFileSync(file, script);
    const ran = spawnSync('bash', ['-c', check.forever ? `timeout 8 bash ${file}; test $? = 124` : `bash ${file}`], {
      cwd: check.cwd === 'repo' ? ROOT : work,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${ran.stdout}${ran.stderr}`;
    assert.equal(ran.status, 0, `exit ${ran.status}${check.forever ? ' (it must keep running until stopped)' : ''}:\n${output}`);
    assert.match(check.forever ? output : ran.stdout, check.expect, output);
  });
}
