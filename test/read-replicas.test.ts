// Issue 32: read replicas for real. A PostgreSQL primary of the test's own
// (another port, created and dropped here) and a streaming replica of it
// (pg_basebackup), two Merx instances with DATABASE_READ_URLS. With the
// replica's replay paused, a write through one instance is seen by the
// next read through the other, on REST and on MCP, while reads of an account
// that has not written since are still served by the replica; a replica that
// stops leaves reads working and comes back into rotation when it returns.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { ADMIN_TOKEN, freshTenant, http, startTestService, type TestService } from './helpers/harness.ts';
import { assertRefusal, callTool } from './helpers/mcp.ts';
import { freePort } from './helpers/service-child.ts';

const VERSION = fs.existsSync('/etc/postgresql') ? fs.readdirSync('/etc/postgresql')[0] : undefined;
const skip = !process.env.DATABASE_URL
  ? 'runs with the PostgreSQL suite (DATABASE_URL): PGlite has no replicas'
  : !VERSION || !fs.existsSync('/usr/bin/pg_createcluster') || !fs.existsSync('/usr/bin/pg_basebackup') || process.getuid?.() !== 0
    ? "needs Debian's pg_createcluster, pg_basebackup and root, to create a primary and a replica of its own"
    : false;

const primaryCluster = `merx_rr_primary_${process.pid}`;
const replicaCluster = `merx_rr_replica_${process.pid}`;
let primaryPort: number;
let replicaPort: number;
const url = (port: number, db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' });
let a: TestService;
let b: TestService;

async function sql<T = any>(connectionString: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function replicaState(svc: TestService): Promise<any> {
  return (await http(svc.url, 'GET', '/healthz')).body.replicas[0];
}

/** merx_db_reads_total by target, from the instance's /metrics. */
async function readsBy(svc: TestService): Promise<Record<string, number>> {
  const text = (await http(svc.url, 'GET', '/metrics', { token: ADMIN_TOKEN })).text;
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^merx_db_reads_total\{target="([^"]+)"\} (\d+)/gm)) counts[m[1]] = Number(m[2]);
  return counts;
}

// Two clusters, a base backup and two services: minutes on a busy machine.
before(
  async () => {
    if (skip) return;
    primaryPort = await freePort();
    replicaPort = await freePort();
    run('pg_createcluster', VERSION!, primaryCluster, '-p', String(primaryPort), '--', '--auth-host=trust', '--auth-local=trust');
    run('pg_ctlcluster', VERSION!, primaryCluster, 'start');
    await sql(url(primaryPort, 'postgres'), 'CREATE DATABASE merx');
    run('pg_createcluster', VERSION!, replicaCluster, '-p', String(replicaPort), '--', '--auth-host=trust', '--auth-local=trust');
    const data = `/var/lib/postgresql/${VERSION}/${replicaCluster}`;
    run('find', data, '-mindepth', '1', '-delete');
    run('su', 'postgres', '-c', `pg_basebackup -h 127.0.0.1 -p ${primaryPort} -U postgres -D ${data} -R -X stream -c fast`);
    run('pg_ctlcluster', VERSION!, replicaCluster, 'start');
    const env = {
      DATABASE_URL: url(primaryPort, 'merx'),
      DATABASE_READ_URLS: url(replicaPort, 'merx'),
      // A paused replica stays in rotation for this test: the lag bound is not what it is about.
      DATABASE_READ_MAX_LAG_MS: '600000',
      DATABASE_READ_WAIT_MS: '50',
      WORKERS: '0',
      RATE_LIMIT_REST_PER_MINUTE: '100000',
      RATE_LIMIT_MCP_PER_MINUTE: '100000',
    };
    a = await startTestService(env);
    b = await startTestService(env);
    for (const svc of [a, b]) await until('the replica in rotation', async () => (await replicaState(svc)).state === 'ok');
  },
  { timeout: 600_000 },
);

after(async () => {
  if (skip) return;
  await a?.close();
  await b?.close();
  for (const cluster of [replicaCluster, primaryCluster]) {
    try {
      run('pg_dropcluster', '--stop', VERSION!, cluster);
    } catch {
      // already gone
    }
  }
});

test(
  'read your writes across two instances while the replica replays nothing: REST and MCP see the write, other accounts still read the replica',
  { skip, timeout: 400_000 },
  async () => {
    const writer = await freshTenant(a.url);
    const bystander = await freshTenant(a.url);
    const order = await writer.op.checkout(writer.accountId);
    await bystander.op.checkout(bystander.accountId);
    // Both accounts' writes so far are on the replica before its replay stops.
    await until('the replica to replay the setup', async () => {
      const rows = await sql(url(replicaPort, 'merx'), 'SELECT 1 FROM orders WHERE id = $1', [order.id]);
      return rows.length === 1 && (await replicaState(b)).lag_bytes === 0;
    });
    await sql(url(replicaPort, 'merx'), 'SELECT pg_wal_replay_pause()');
    try {
      const patched = await http(a.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: writer.key, body: { admin_notes: 'written through A' } });
      assert.equal(patched.status, 200, patched.text);
      const stale = await sql(url(replicaPort, 'merx'), 'SELECT admin_notes FROM orders WHERE id = $1', [order.id]);
      assert.notEqual(stale[0]?.admin_notes, 'written through A', 'the replica really lags: it has not replayed the write');

      const before = await readsBy(b);
      const rest = await http(b.url, 'GET', `/api/v1/orders/${order.id}`, { token: writer.key });
      assert.equal(rest.status, 200, rest.text);
      assert.equal(rest.body.data.admin_notes, 'written through A', 'REST through B sees the write made through A');
      const mcp = await callTool(b.url, writer.key, 'get_order', { id: order.id });
      assert.equal(mcp.structuredContent.data.admin_notes, 'written through A', 'MCP through B sees it too');
      const list = await http(b.url, 'GET', '/api/v1/orders', { token: writer.key });
      assert.equal(list.body.data.find((o: any) => o.id === order.id).admin_notes, 'written through A', 'and so does the list');
      // The MCP write path as well: update_order through B, read through A.
      const viaMcp = await callTool(b.url, writer.key, 'update_order', { id: order.id, admin_notes: 'written by MCP through B' });
      assert.equal(viaMcp.isError, false, JSON.stringify(viaMcp.structuredContent));
      assert.equal((await http(a.url, 'GET', `/api/v1/orders/${order.id}`, { token: writer.key })).body.data.admin_notes, 'written by MCP through B');

      const middle = await readsBy(b);
      assert.ok((middle.primary ?? 0) >= (before.primary ?? 0) + 3, `the writer's reads went to the primary: ${JSON.stringify({ before, middle })}`);
      const seen = await http(b.url, 'GET', '/api/v1/orders', { token: bystander.key });
      assert.equal(seen.status, 200);
      assert.equal(seen.body.data.length, 1);
      const after = await readsBy(b);
      assert.equal(
        after.replica_1,
        (middle.replica_1 ?? 0) + 1,
        `an account with nothing newer than the replica reads the replica: ${JSON.stringify({ middle, after })}`,
      );
    } finally {
      await sql(url(replicaPort, 'merx'), 'SELECT pg_wal_replay_resume()');
    }
    // Once replay passes the writer's last write, its reads go back to the replica.
    await until('the replica to catch up', async () => (await replicaState(b)).lag_bytes === 0);
    const start = await readsBy(b);
    const again = await http(b.url, 'GET', `/api/v1/orders/${order.id}`, { token: writer.key });
    assert.equal(again.body.data.admin_notes, 'written by MCP through B');
    assert.equal((await readsBy(b)).replica_1, (start.replica_1 ?? 0) + 1);
  },
);

test(
  'a replica that stops leaves reads working on the primary, shows as down on /healthz and /metrics, and comes back into rotation',
  { skip, timeout: 400_000 },
  async () => {
    const tenant = await freshTenant(a.url);
    const order = await tenant.op.checkout(tenant.accountId);
    run('pg_ctlcluster', VERSION!, replicaCluster, 'stop', '-m', 'immediate');
    try {
      for (const svc of [a, b]) {
        for (let i = 0; i < 5; i++) {
          const res = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: tenant.key });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.data.id, order.id);
          const list = await http(svc.url, 'GET', '/api/v1/orders', { token: tenant.key });
          assert.equal(list.status, 200, list.text);
        }
        await until('the replica shown down', async () => (await replicaState(svc)).state === 'down');
        const health = await http(svc.url, 'GET', '/healthz');
        assert.equal(health.status, 200, 'a replica down does not make the instance unhealthy');
        assert.equal(health.body.ok, true);
        assert.equal(health.body.replicas[0].lag_ms, null);
        assert.equal(typeof health.body.replicas[0].error, 'string');
        const metrics = (await http(svc.url, 'GET', '/metrics', { token: ADMIN_TOKEN })).text;
        assert.match(metrics, /merx_db_replica_up\{replica="replica_1",state="down"\} 0/);
      }
    } finally {
      run('pg_ctlcluster', VERSION!, replicaCluster, 'start');
    }
    for (const svc of [a, b]) await until('the replica back in rotation', async () => (await replicaState(svc)).state === 'ok');
    const metrics = (await http(a.url, 'GET', '/metrics', { token: ADMIN_TOKEN })).text;
    assert.match(metrics, /merx_db_replica_up\{replica="replica_1",state="ok"\} 1/);
    assert.match(metrics, /merx_db_replica_lag_seconds\{replica="replica_1"\} /);
  },
);

test('a replica that lags past DATABASE_READ_MAX_LAG_MS is left out, and taken back once it catches up', { skip, timeout: 400_000 }, async () => {
  const strict = await startTestService({
    DATABASE_URL: url(primaryPort, 'merx'),
    DATABASE_READ_URLS: url(replicaPort, 'merx'),
    DATABASE_READ_MAX_LAG_MS: '300',
    WORKERS: '0',
  });
  try {
    await until('the replica in rotation', async () => (await replicaState(strict)).state === 'ok');
    const tenant = await freshTenant(strict.url);
    await sql(url(replicaPort, 'merx'), 'SELECT pg_wal_replay_pause()');
    try {
      await tenant.op.checkout(tenant.accountId);
      await until('the replica left out as lagging', async () => (await replicaState(strict)).state === 'lagging');
      assert.equal((await http(strict.url, 'GET', '/api/v1/orders', { token: tenant.key })).body.data.length, 1);
    } finally {
      await sql(url(replicaPort, 'merx'), 'SELECT pg_wal_replay_resume()');
    }
    await until('the replica back in rotation', async () => (await replicaState(strict)).state === 'ok');
  } finally {
    await strict.close();
  }
});

test(
  "the primary stops: keys the instances know keep reading on the replica (REST and MCP, an instance's own last write included), writes answer 503 at once, and everything is back with the primary",
  { skip, timeout: 400_000 },
  async () => {
    const tenant = await freshTenant(a.url);
    const order = await tenant.op.checkout(tenant.accountId);
    const unseenKey = await tenant.op.issueKey(tenant.accountId);
    const written = await http(a.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: tenant.key, body: { admin_notes: 'before the outage' } });
    assert.equal(written.status, 200, written.text);
    // Both instances know the key, and the replica has the write.
    for (const svc of [a, b]) {
      await until('the write on every read path', async () => {
        const res = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: tenant.key });
        return res.body?.data?.admin_notes === 'before the outage';
      });
    }
    await until(
      'the replica replayed the write',
      async () =>
        (await sql(url(replicaPort, 'merx'), 'SELECT admin_notes FROM orders WHERE id = $1', [order.id]))[0]?.admin_notes === 'before the outage',
    );
    run('pg_ctlcluster', VERSION!, primaryCluster, 'stop', '-m', 'fast');
    try {
      for (const svc of [a, b]) {
        await until('the instance sees the primary gone', async () => (await http(svc.url, 'GET', '/healthz')).status === 503);
        const one = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: tenant.key });
        assert.equal(one.status, 200, `a read with a known key while the primary is away: ${one.text}`);
        assert.equal(one.body.data.admin_notes, 'before the outage');
        const list = await http(svc.url, 'GET', '/api/v1/orders?limit=5', { token: tenant.key });
        assert.equal(list.status, 200, list.text);
        assert.ok(list.body.data.some((o: { id: string }) => o.id === order.id));
        const viaMcp = await callTool(svc.url, tenant.key, 'get_order', { id: order.id });
        assert.equal(viaMcp.isError, false, JSON.stringify(viaMcp));
        assert.equal(viaMcp.structuredContent.data.admin_notes, 'before the outage');
        // A write: refused at once, in the contract's words, on both transports.
        const write = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, { token: tenant.key, body: { admin_notes: 'during' } });
        assert.equal(write.status, 503, write.text);
        assert.equal(write.headers.get('retry-after'), '2');
        assert.equal(write.body.error.details.reason, 'database_unavailable');
        const mcpWrite = await callTool(svc.url, tenant.key, 'update_order', { id: order.id, admin_notes: 'during' });
        assertRefusal(mcpWrite, 'UNAVAILABLE');
        // A key never seen by the instance cannot be checked without the primary: 503, never a 401 or a 500.
        const unseen = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: unseenKey });
        assert.equal(unseen.status, 503, unseen.text);
        // The operator API reads the primary: refused at once.
        const admin = await http(svc.url, 'GET', `/admin/api/accounts/${tenant.accountId}`, { token: ADMIN_TOKEN });
        assert.equal(admin.status, 503);
      }
    } finally {
      run('pg_ctlcluster', VERSION!, primaryCluster, 'start');
    }
    for (const svc of [a, b]) {
      await until('the instance sees the primary back', async () => (await http(svc.url, 'GET', '/healthz')).status === 200);
      const after = await http(svc.url, 'PATCH', `/api/v1/orders/${order.id}`, {
        token: unseenKey,
        body: { admin_notes: `after, through ${svc.url}` },
      });
      assert.equal(after.status, 200, after.text);
      const read = await http(svc.url, 'GET', `/api/v1/orders/${order.id}`, { token: tenant.key });
      assert.equal(read.body.data.admin_notes, `after, through ${svc.url}`, 'its own write, read back at once');
    }
  },
);
