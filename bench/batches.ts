// npm run bench:batches — EXTENSIONS 8 on PostgreSQL: a shipment batch of
// 1,000 orders against the built-in courier simulator (wall time from the
// POST to the batch's finished_at, target <= 20 s; courier calls in flight,
// per courier and in all, from the simulator's call log), then the batch's
// labels as one PDF (GET .../labels: 1,000 labels fetched from the simulator
// and merged, target <= 5 s; the service's resident memory sampled during
// it), and the merge alone (pdf-lib, in this process: time and heap).
// Writes bench/RESULTS-batches.md; the database and the service are removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { PDFDocument } from 'pdf-lib';
import { benchTools, setting, operatorCall, timedCall } from './bench-tools.ts';
import { startServiceProcess } from './service-process.ts';
import { mergePdfs } from '../src/modules/shipments/batch-labels.ts';
import { mostInFlight } from '../test/helpers/batches.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ORDERS = setting('BENCH_BATCH_ORDERS', 1000);
const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-batches.md');
const TOKEN = 'bench-operator-token-0123456789abcdef';
const COURIERS = ['courier_a', 'courier_b', 'courier_c'] as const;

const { log, cleanups, createDatabase, run } = benchTools('bench:batches', ADMIN_URL, 'merx_bench_batch');

const call = timedCall;
const operator = (base: string, method: string, route: string, body?: unknown) => operatorCall(base, TOKEN, method, route, body);

/** The service's resident set in MB (Linux /proc). */
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

await run(async () => {
  const loadBefore = os.loadavg()[0];
  const databaseUrl = await createDatabase();
  const service = await startServiceProcess(databaseUrl, TOKEN, { env: { RATE_LIMIT_REST_PER_MINUTE: '100000' } });
  cleanups.push({ name: 'stop service', run: () => service.stop() });
  const base = service.url;
  log(`service ${base} (pid ${service.pid})`);

  const account = (await operator(base, 'POST', '/accounts', { name: 'Bench batches', email: 'bench-batches@example.com' })).data;
  for (const slug of COURIERS) await operator(base, 'PUT', `/accounts/${account.id}/couriers/${slug}`, { enabled: true });
  const key = (await operator(base, 'POST', `/accounts/${account.id}/keys`, { name: 'bench', preset: 'fulfilment' })).key as string;

  log(`checking out ${ORDERS} orders (couriers a, b, c in turn)`);
  const orderIds: string[] = new Array(ORDERS);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < ORDERS; i = next++) {
        const order = await operator(base, 'POST', `/accounts/${account.id}/orders`, {
          customer: { name: `Customer ${i}`, email: `c${i}@example.com`, phone: '+359888000111' },
          shipping: {
            address: `ul. Vitosha ${i}`,
            city: 'Sofia',
            zip: '1000',
            courier_slug: COURIERS[i % 3],
            courier_delivery_mode: 'office',
            courier_office_id: 101,
          },
          legacy: { product_name: 'Mug', quantity: 1, unit_price: 12.5 },
          payment_method: 'cod',
        });
        orderIds[i] = order.data.id;
      }
    }),
  );

  log('batch of ' + ORDERS);
  const rssBeforeBatch = rssMb(service.pid);
  const started = performance.now();
  const created = await call(base, key, 'POST', '/api/v1/shipment-batches', { items: orderIds.map((order_id) => ({ order_id })) });
  if (created.status !== 202) throw new Error(`batch: ${created.status} ${JSON.stringify(created.body)}`);
  const batchId = created.body.data.id as string;
  let batch = created.body.data;
  let rssPeakBatch = rssBeforeBatch;
  while (!batch.finished_at) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    batch = (await call(base, key, 'GET', `/api/v1/shipment-batches/${batchId}`)).body.data;
    rssPeakBatch = Math.max(rssPeakBatch, rssMb(service.pid));
  }
  const wallMs = performance.now() - started;
  const batchMs = Date.parse(batch.finished_at) - Date.parse(batch.created_at);
  log(`done in ${(wallMs / 1000).toFixed(2)} s: ${batch.succeeded} succeeded, ${batch.failed} failed`);

  const perCourier: Array<{ slug: string; calls: number; most: number; p50: number; p99: number }> = [];
  const everyCall: Array<{ at: string; duration_ms: number | null }> = [];
  for (const slug of COURIERS) {
    const calls = (
      (await operator(base, 'GET', `/courier-sim/${slug}/calls`)).data as Array<{ at: string; operation: string; duration_ms: number | null }>
    ).filter((c) => c.operation === 'create');
    everyCall.push(...calls);
    const durations = calls.map((c) => c.duration_ms ?? 0).sort((a, b) => a - b);
    perCourier.push({
      slug,
      calls: calls.length,
      most: mostInFlight(calls),
      p50: durations[Math.floor(durations.length * 0.5)] ?? 0,
      p99: durations[Math.floor(durations.length * 0.99)] ?? 0,
    });
  }
  const mostOverall = mostInFlight(everyCall);

  log('labels: one PDF of every label');
  const rssBeforeLabels = rssMb(service.pid);
  let rssPeakLabels = rssBeforeLabels;
  const sampler = setInterval(() => (rssPeakLabels = Math.max(rssPeakLabels, rssMb(service.pid))), 20);
  const labelsStarted = performance.now();
  const res = await fetch(`${base}/api/v1/shipment-batches/${batchId}/labels`, { headers: { authorization: `Bearer ${key}` } });
  const pdf = Buffer.from(await res.arrayBuffer());
  const labelsMs = performance.now() - labelsStarted;
  clearInterval(sampler);
  if (res.status !== 200) throw new Error(`labels: ${res.status} ${pdf.toString('utf8').slice(0, 300)}`);
  const pages = (await PDFDocument.load(pdf)).getPageCount();
  log(`labels: ${pages} pages, ${(pdf.length / 1024 / 1024).toFixed(1)} MB in ${(labelsMs / 1000).toFixed(2)} s`);

  // The merge alone: the same 1,000 single labels, fetched once, merged in this process.
  const items = [] as string[];
  let cursor: string | null = null;
  do {
    const page: any = (
      await call(
        base,
        key,
        'GET',
        `/api/v1/shipment-batches/${batchId}/items?status=succeeded&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
    ).body;
    items.push(...page.data.map((i: { shipment_id: string }) => i.shipment_id));
    cursor = page.next_cursor;
  } while (cursor);
  const singles: Buffer[] = [];
  for (const id of items) {
    const label = await fetch(`${base}/api/v1/shipments/${id}/label`, { headers: { authorization: `Bearer ${key}` } });
    singles.push(Buffer.from(await label.arrayBuffer()));
  }
  const singleBytes = singles.reduce((n, b) => n + b.length, 0);
  globalThis.gc?.();
  const heapBefore = process.memoryUsage();
  const mergeStarted = performance.now();
  const merged = await mergePdfs(singles);
  const mergeMs = performance.now() - mergeStarted;
  const heapAfter = process.memoryUsage();
  log(`merge alone: ${(mergeMs / 1000).toFixed(2)} s`);

  const cpus = os.cpus();
  const pgVersion = execFileSync('psql', [ADMIN_URL, '-Atc', 'SHOW server_version'], { encoding: 'utf8' }).trim();
  const mb = (n: number) => `${n.toFixed(0)} MB`;
  const lines = [
    '# Shipment batches (EXTENSIONS 8)',
    '',
    '`npm run bench:batches` (`bench/batches.ts`): a batch of 1,000 orders against the built-in courier simulator, then its',
    'labels as one PDF. The service runs as a child process on PostgreSQL with its workers (the batch runner) and the',
    'simulator in it, as `npm start` runs it; orders are spread over courier_a, courier_b and courier_c in turn.',
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}`,
    `- Node ${process.version}, PostgreSQL ${pgVersion}; load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${os.loadavg()[0].toFixed(2)} (other engineers share the machine)`,
    '',
    '## The batch',
    '',
    '| | |',
    '|---|---|',
    `| items | ${ORDERS} (${batch.succeeded} succeeded, ${batch.failed} failed) |`,
    `| wall time, POST to finished_at seen (target <= 20 s) | **${(wallMs / 1000).toFixed(2)} s** |`,
    `| created_at to finished_at (the batch's own) | ${(batchMs / 1000).toFixed(2)} s |`,
    `| waybills per second | ${(ORDERS / (wallMs / 1000)).toFixed(0)} |`,
    `| the POST's answer (202) | ${created.ms.toFixed(0)} ms |`,
    `| service RSS before / peak during | ${mb(rssBeforeBatch)} / ${mb(rssPeakBatch)} |`,
    '',
    "Courier calls in flight, from the simulator's call log (the most calls open at one moment; the limit is 4 per courier for one batch):",
    '',
    '| courier | create calls | most in flight | call p50 | call p99 |',
    '|---|---|---|---|---|',
    ...perCourier.map((c) => `| ${c.slug} | ${c.calls} | ${c.most} | ${c.p50.toFixed(1)} ms | ${c.p99.toFixed(1)} ms |`),
    `| all three | ${everyCall.length} | ${mostOverall} | | |`,
    '',
    '## The labels',
    '',
    '| | |',
    '|---|---|',
    `| GET /shipment-batches/{id}/labels: 1,000 labels fetched from the simulator (8 at a time) and merged (target <= 5 s) | **${(labelsMs / 1000).toFixed(2)} s** |`,
    `| the PDF | ${pages} pages, ${(pdf.length / 1024 / 1024).toFixed(1)} MB (the single labels: ${(singleBytes / 1024 / 1024).toFixed(1)} MB together) |`,
    `| service RSS before / peak during the request | ${mb(rssBeforeLabels)} / ${mb(rssPeakLabels)} (+${mb(rssPeakLabels - rssBeforeLabels)}) |`,
    `| the merge alone (pdf-lib, 1,000 labels already in memory) | ${(mergeMs / 1000).toFixed(2)} s |`,
    `| heap used before / after the merge alone | ${mb(heapBefore.heapUsed / 1024 / 1024)} / ${mb(heapAfter.heapUsed / 1024 / 1024)}; RSS ${mb(heapBefore.rss / 1024 / 1024)} / ${mb(heapAfter.rss / 1024 / 1024)}; merged ${(merged.length / 1024 / 1024).toFixed(1)} MB |`,
    '',
    'No timing is asserted in the tests; this file is the measurement. Rerun instead of editing it.',
    '',
  ];
  fs.writeFileSync(RESULTS_FILE, lines.join('\n'));
  log(`wrote ${path.relative(process.cwd(), RESULTS_FILE)}`);
});
