// EXTENSIONS 8 through merx-client: exportRecords(resource, filters) yields
// parsed records, hands back the first answer's events cursor, and resumes a
// stream cut in the middle (a proxy drops the connection part way) with
// starting_after: every record once, in order, none lost at the cut.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startTestService, http, operator, type TestService } from './helpers/harness.ts';
import { checkoutWith, shipTenant } from './helpers/shipments.ts';

const ROOT = path.join(import.meta.dirname, '..');
import { drainFeed } from './helpers/events-feed.ts';
import { exportOf, linesOf } from './helpers/exports.ts';
import { exportRecords, MerxExportError } from '../packages/client/src/exports.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.close();
});

/** A TCP proxy to the service that cuts each of the first `cuts` connections after `afterBytes` of answer. */
async function cuttingProxy(afterBytes: number, cuts: number) {
  const target = new URL(svc.url);
  let cut = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const cutThis = cut < cuts;
    let sent = 0;
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (cutThis && sent > afterBytes) {
        cut++;
        client.write(chunk.subarray(0, chunk.length - (sent - afterBytes)));
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('close', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cutsMade: () => cut,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

test('exportRecords resumes a stream cut in the middle: every record once, in order, and the first events cursor', async () => {
  const t = await shipTenant(svc, { scopes: ['orders:read', 'orders:write', 'customers:read'] });
  await operator(svc.url).call('POST', `/accounts/${t.accountId}/seed`, { orders: 2000, products: 2 });
  const text = (await exportOf(svc.url, t.key, 'orders')).text;
  const whole = linesOf(text).map((l) => JSON.parse(l).id);
  // fetch asks for gzip: the cuts fall within the first few hundred kilobytes of the compressed stream.
  const proxy = await cuttingProxy(40_000, 2);
  try {
    // A plain read of the cut stream fails: it never looks complete.
    const cutOnce = await cuttingProxy(30_000, 1);
    const res = await fetch(`${cutOnce.url}/api/v1/exports/orders`, { headers: { authorization: `Bearer ${t.key}` } });
    await assert.rejects(res.text(), 'a cut stream is an error, never a short file');
    await cutOnce.close();

    const orders = exportRecords({ baseUrl: proxy.url, apiKey: t.key }, 'orders');
    const ids: string[] = [];
    for await (const order of orders) ids.push(order.id);
    assert.equal(proxy.cutsMade(), 2, 'the stream was cut twice');
    assert.equal(orders.resumed, 2);
    assert.deepEqual(ids, whole, 'every record once, in the list order');
    assert.ok(orders.eventsCursor);
    const feed = await drainFeed(svc.url, t.key, orders.eventsCursor);
    assert.deepEqual(feed.events, [], 'nothing happened after the snapshot');
    // Customers resume by key.
    const customers = [];
    for await (const customer of exportRecords({ baseUrl: svc.url, apiKey: t.key }, 'customers', { q: '' })) customers.push(customer.key);
    const listed = await http(svc.url, 'GET', '/api/v1/customers?limit=200', { token: t.key });
    assert.deepEqual(
      customers.slice(0, listed.body.data.length),
      listed.body.data.map((c: any) => c.key),
    );
  } finally {
    await proxy.close();
  }
});

test('exportRecords gives a refusal back as MerxExportError with the status and error body', async () => {
  const t = await shipTenant(svc, { scopes: ['orders:read'] });
  const iterate = async () => {
    for await (const _ of exportRecords({ baseUrl: svc.url, apiKey: t.key }, 'customers')) void _;
  };
  await assert.rejects(
    iterate(),
    (err: unknown) => err instanceof MerxExportError && err.status === 403 && (err.body as any).error.code === 'scope_missing',
  );
});

test('the TypeScript sample of docs/exports.md runs as written: it loads the orders and follows the feed from the cursor', async () => {
  const t = await shipTenant(svc, { scopes: ['orders:read', 'orders:write'] });
  const order = await checkoutWith(svc, t.accountId, 'courier_a');
  const sample = /^```ts\n([\s\S]*?)^```/m.exec(fs.readFileSync(path.join(ROOT, 'docs/exports.md'), 'utf8'))![1];
  // Inside the repository, so that `merx-client` resolves to the workspace package (its dist, as npm would install it).
  const dir = fs.mkdtempSync(path.join(ROOT, 'test', '.docs-sample-'));
  try {
    fs.writeFileSync(path.join(dir, 'sample.ts'), sample);
    const later = spawn(process.execPath, [path.join(dir, 'sample.ts')], { env: { ...process.env, MERX_URL: svc.url, MERX_KEY: t.key } });
    let out = '';
    later.stdout.on('data', (c) => (out += c));
    later.stderr.on('data', (c) => (out += c));
    const code = await new Promise((resolve) => later.on('close', resolve));
    assert.equal(code, 0, out);
    assert.match(out, /^loaded 1 orders; resumed 0 times$/m, out);
    void order;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
