// Failing clearly at start (and saying so while running): an unsupported Node
// (or `npm ci --omit=dev`, which leaves out the pinned Node 24) gets one line
// that says what to do, before any .ts file is loaded; a DATA_DIR that cannot
// be created or written stops the service at once with a message; a REDIS_URL
// whose Redis is unreachable is logged at start and when it comes back, and
// shown on /healthz.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { unsupportedNodeMessage, REQUIRED_MAJOR } from '../bin/node-check.js';
import { ENCRYPTION_KEYS, healthBesidesReplicas } from './helpers/harness.ts';

const ROOT = path.join(import.meta.dirname, '..');
const SECOND = 1000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` in the project and waits for it to exit (or kills it after `timeoutMs`). */
function run(node: string, args: string[], env: Record<string, string>, timeoutMs = 30 * SECOND): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(node, args, { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('NODE_TEST') && k !== 'REDIS_URL') env[k] = v;
  return { ...env, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: '0', LOG_LEVEL: 'warn', WORKERS: '0' };
}

/** A message that a person reads: one line, no stack trace. */
function assertOneLine(text: string, note: string): void {
  const lines = text.trim().split('\n');
  assert.equal(lines.length, 1, `${note}: one line, got ${JSON.stringify(text)}`);
  assert.doesNotMatch(text, /^\s+at /m, `${note}: no stack trace`);
}

test('the Node check: a one-line message naming the version and what to do below Node 24, nothing from 24 on', () => {
  const message = unsupportedNodeMessage('v20.20.2', '/usr/bin/node')!;
  assertOneLine(message, 'message');
  assert.match(message, /Node\.js 24/);
  assert.match(message, /v20\.20\.2/);
  assert.match(message, /npm install/);
  assert.match(message, /--omit=dev/);
  for (const version of ['v18.0.0', 'v22.18.0', 'v23.11.1']) assert.ok(unsupportedNodeMessage(version, 'node'), version);
  for (const version of [`v${REQUIRED_MAJOR}.0.0`, 'v24.21.0', 'v25.1.0']) assert.equal(unsupportedNodeMessage(version, 'node'), null, version);
  const engines = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines;
  assert.deepEqual(engines, { node: `>=${REQUIRED_MAJOR}` }, 'package.json declares the same requirement');
});

/** A Node older than 24 on this machine (the system one, as after `npm ci --omit=dev`), if there is one. */
function olderNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    try {
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
      if (unsupportedNodeMessage(version, candidate)) return candidate;
    } catch {
      // not there
    }
  }
  return null;
}

const older = olderNode();

test(
  'npm start and npx merx on an older Node (what `npm ci --omit=dev` leaves) exit 1 with the one-line message, no stack trace',
  { skip: older ? false : 'no Node older than 24 on this machine' },
  async () => {
    for (const entry of [['bin/start.js'], ['bin/merx.js', 'migrate']]) {
      const res = await run(older!, entry, { DATA_DIR: 'memory://' });
      assert.equal(res.code, 1, `${entry.join(' ')}: ${res.stderr}`);
      assertOneLine(res.stderr, entry.join(' '));
      assert.match(res.stderr, /needs Node\.js 24/);
      assert.equal(res.stdout, '');
    }
    const scripts = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    assert.equal(scripts.start, 'node bin/start.js', 'npm start goes through the check');
  },
);

test('a DATA_DIR that cannot be created or written stops the service at once with a message that names it (exit 1)', async (t) => {
  const file = path.join(os.tmpdir(), `merx-not-a-dir-${process.pid}`);
  fs.writeFileSync(file, '');
  t.after(() => fs.rmSync(file, { force: true }));
  for (const dataDir of ['/proc/nope', path.join(file, 'data')]) {
    for (const entry of [['bin/start.js'], ['bin/merx.js', 'migrate']]) {
      const started = Date.now();
      const res = await run(process.execPath, entry, { DATA_DIR: dataDir, DATABASE_URL: '' });
      assert.equal(res.code, 1, `${dataDir} ${entry.join(' ')}: exit ${res.code} ${res.stderr}`);
      assert.ok(Date.now() - started < 20 * SECOND, 'at once, not after spinning');
      assertOneLine(res.stderr, dataDir);
      assert.match(res.stderr, new RegExp(`DATA_DIR ${dataDir.replace(/[/\\]/g, '.')} cannot be used`));
    }
  }
});

const REDIS = { host: '127.0.0.1', port: 6379 };
const redisUp = await new Promise<boolean>((resolve) => {
  const socket = net.connect(REDIS);
  socket.setTimeout(1000);
  socket.once('connect', () => (socket.destroy(), resolve(true)));
  socket.once('error', () => resolve(false));
  socket.once('timeout', () => (socket.destroy(), resolve(false)));
});

/** A port where nothing listens (yet). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test(
  'REDIS_URL set but unreachable: a warning at start, /healthz says redis unavailable, and a note when it is back',
  { skip: redisUp ? false : 'no Redis at 127.0.0.1:6379 to come back to' },
  async (t) => {
    const port = await freePort();
    const env = {
      ...baseEnv(),
      REDIS_URL: `redis://127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
      DATA_DIR: 'memory://',
      ADMIN_TOKEN: 'startup-test-operator-token',
      ENCRYPTION_KEYS,
    };
    const child = spawn(process.execPath, ['bin/start.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const proxy = net.createServer((client) => {
      const upstream = net.connect(REDIS);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    t.after(() => {
      child.kill('SIGKILL');
      proxy.close();
    });
    const until = async <T>(probe: () => Promise<T | null> | T | null, what: string, ms = 60 * SECOND): Promise<T> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = await probe();
        if (value) return value;
        if (child.exitCode !== null) throw new Error(`the service exited: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`${what} did not happen: ${stdout.slice(-2000)} ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const base = await until(() => /API\s+(http:\/\/\S+)\/api\/v1/.exec(stdout)?.[1] ?? null, 'start-up');
    const health = async () => healthBesidesReplicas(await (await fetch(`${base}/healthz`)).json());

    const warnings = stdout.split('\n').filter((l) => l.includes('Redis is unreachable'));
    assert.equal(warnings.length, 1, `one warning at start: ${stdout}`);
    assert.equal(JSON.parse(warnings[0]).level, 40, 'logged as a warning');
    assert.deepEqual(await health(), { ok: true, redis: 'unavailable' });

    // Requests are still limited, per instance and without waiting on Redis, while it is away.
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const account = await (
      await fetch(`${base}/admin/api/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'R', email: 'r@example.com' }) })
    ).json();
    const issued = await (
      await fetch(`${base}/admin/api/accounts/${account.data.id}/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'r', preset: 'read_only' }),
      })
    ).json();
    const started = Date.now();
    const orders = await fetch(`${base}/api/v1/orders`, { headers: { authorization: `Bearer ${issued.key}` } });
    assert.equal(orders.status, 200, await orders.text());
    assert.equal(orders.headers.get('x-ratelimit-remaining'), '299', 'counted by the in-process limiter');
    assert.ok(Date.now() - started < 1000, 'no wait for the missing Redis');

    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    await until(async () => ((await health()).redis === 'connected' ? true : null), 'reconnection');
    await until(() => (stdout.includes('Redis is reachable again') ? true : null), 'the reconnection note');
    assert.equal(stdout.split('\n').filter((l) => l.includes('Redis is unreachable')).length, 1, 'retries are not logged one by one');
  },
);
