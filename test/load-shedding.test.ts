// Issue 27, load shedding: past a bound (here a tiny event-loop delay bound
// and a loop blocked on purpose) every request is answered 503 unavailable at
// once, in the contract's shape with Retry-After, on REST, MCP and the
// operator API; /healthz keeps answering and says the instance is under
// pressure; and the OpenAPI documents describe the 503 everywhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { rpc, toolCall } from './helpers/mcp.ts';
import { assertResponseMatches } from './helpers/openapi-validator.ts';

let svc: TestService;
before(async () => {
  // A 1 s sample: the busy wait below (1.2 s) spans a whole sample, and the pressure it measured holds for the next one.
  svc = await startTestService({ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '50', OVERLOAD_SAMPLE_INTERVAL_MS: '1000', OVERLOAD_RETRY_AFTER_SEC: '3' });
});
after(async () => svc?.close());

/** Until /healthz shows no pressure: starting a service (PGlite, migrations) itself blocks the loop past 50 ms. */
async function calm(): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await http(svc.url, 'GET', '/healthz')).body.pressure) {
    assert.ok(Date.now() < deadline, 'the service never calmed down');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Blocks this process's event loop (the service runs in it) as a request storm would. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

function assertShed(res: Awaited<ReturnType<typeof http>>, where: string): void {
  const error = assertError(res, 503, 'unavailable', where);
  assert.deepEqual(error.details, { reason: 'overloaded', retry_after_sec: 3 }, where);
  assert.equal(res.headers.get('retry-after'), '3', `${where}: Retry-After`);
}

test('past the event-loop bound: REST, MCP and the operator API answer 503 unavailable with Retry-After; /healthz and /metrics answer', async () => {
  await calm();
  const { key } = await freshTenant(svc.url);
  await calm();
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: key })).status, 200, 'healthy before');
  const healthy = await http(svc.url, 'GET', '/healthz');
  assert.deepEqual(healthy.body, { ok: true }, 'no pressure field while healthy');

  const [publicDoc, operatorDoc] = await Promise.all([
    http(svc.url, 'GET', '/api/v1/openapi.json').then((r) => r.body),
    http(svc.url, 'GET', '/admin/api/openapi.json').then((r) => r.body),
  ]);
  blockEventLoop(1200);
  const [rest, mcp, admin, health, metrics] = await Promise.all([
    http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: key }),
    rpc(svc.url, key, toolCall('list_orders', { limit: 1 })),
    http(svc.url, 'GET', '/admin/api/accounts', { token: ADMIN_TOKEN }),
    http(svc.url, 'GET', '/healthz'),
    http(svc.url, 'GET', '/metrics', { token: ADMIN_TOKEN }),
  ]);
  assertShed(rest, 'REST');
  assertResponseMatches(publicDoc, 'GET', '/api/v1/orders', rest);
  assertShed(mcp, 'MCP (an HTTP-level refusal)');
  assertShed(admin, 'operator API');
  assertResponseMatches(operatorDoc, 'GET', '/admin/api/accounts', admin);
  assert.equal(health.status, 200, '/healthz keeps answering');
  assert.equal(health.body.ok, true);
  assert.equal(health.body.pressure.reason, 'event_loop_delay');
  assert.ok(health.body.pressure.event_loop_delay_ms > 50, JSON.stringify(health.body));
  assert.equal(health.body.pressure.retry_after_sec, 3);
  assert.equal(metrics.status, 200, '/metrics keeps answering');

  // The next quiet sample ends it.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  assert.equal((await http(svc.url, 'GET', '/api/v1/orders?limit=1', { token: key })).status, 200, 'served again');
  assert.deepEqual((await http(svc.url, 'GET', '/healthz')).body, { ok: true });
});

test('both OpenAPI documents describe 503 with Retry-After, and 429, on every operation', async () => {
  await calm();
  for (const path of ['/api/v1/openapi.json', '/admin/api/openapi.json']) {
    const doc = (await http(svc.url, 'GET', path)).body;
    let operations = 0;
    for (const [route, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        operations++;
        for (const status of ['503', '429']) {
          if (status === '429' && route.endsWith('/openapi.json')) continue;
          assert.ok(op.responses[status], `${path}: ${method.toUpperCase()} ${route} documents ${status}`);
          assert.ok(op.responses[status].headers?.['Retry-After'], `${path}: ${method.toUpperCase()} ${route} ${status} has Retry-After`);
        }
      }
    }
    assert.ok(operations > 10, `${path}: ${operations} operations`);
  }
});

test('bounds are validated at start', async () => {
  const { loadConfig, ConfigError } = await import('../src/config.ts');
  assert.throws(() => loadConfig({ OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '1.5' }), ConfigError);
  assert.throws(() => loadConfig({ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '-1' }), ConfigError);
  assert.throws(() => loadConfig({ AUTH_FAILURES_PER_WINDOW: '0' }), ConfigError);
  const config = loadConfig({ OVERLOAD_MAX_EVENT_LOOP_UTILIZATION: '0.95', OVERLOAD_MAX_HEAP_MB: '512', OVERLOAD_SHEDDING: '0' });
  assert.equal(config.overload.maxEventLoopUtilization, 0.95);
  assert.equal(config.overload.maxHeapUsedBytes, 512 * 2 ** 20);
  assert.equal(config.overload.enabled, false);
});
