// node bench/attempt-log-size.ts (issue 30): what the attempt log costs in
// disk. On a fresh PostgreSQL database migrated as the service migrates it,
// writes a day of 100,000 first attempts that succeed (what a receiver
// typically answers: 200, a handful of headers, a short body) and, apart, the
// same number at the bounds (20 response headers of 200 characters, a body of
// 1,000 characters), each row made by the service's own attemptRow() with the
// request headers its sender signs, in batches through insertAttempts() as
// the engine writes them. Reports the table, TOAST and index bytes per
// attempt and per 100,000, appended to bench/RESULTS-attempt-log.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { openDb } from '../src/platform/db/open-db.ts';
import { migrateDatabase } from '../src/views.ts';
import type { Db } from '../src/platform/db/db.ts';
import { attemptRow, insertAttempts, type AttemptRow } from '../src/modules/webhooks/attempts/log.ts';
import { deliveryAttemptId, signatureHeaders } from '../src/modules/webhooks/signing/signature.ts';
import { benchTools, setting } from './bench-tools.ts';

const ADMIN_URL = process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const ATTEMPTS = setting('BENCH_ATTEMPTS', 100_000);
const BATCH = 500;
const RESULTS = path.join(import.meta.dirname, 'RESULTS-attempt-log.md');

const { log, createDatabase, run } = benchTools('attempt-log', ADMIN_URL, 'merx_attempts');

/** What a sender sends for one delivery of an order event: the body it signs and the headers of webhooks/delivery/https-sender.ts. */
function requestHeaders(deliveryId: string, eventId: string): Record<string, string> {
  const rawBody = JSON.stringify({
    id: eventId,
    event: 'order.updated',
    created_at: new Date().toISOString(),
    data: { order: { id: crypto.randomUUID() } },
  });
  const secret = `whsec_${crypto.randomBytes(24).toString('base64url')}`;
  const signed = signatureHeaders({ rawBody, eventId, timestampSec: Math.floor(Date.now() / 1000), secrets: [secret] });
  return {
    'content-type': 'application/json',
    'user-agent': 'merx-webhooks/1',
    'x-merx-event': 'order.updated',
    'x-merx-event-id': eventId,
    'x-merx-delivery': deliveryAttemptId(deliveryId, 1),
    'x-merx-resource-version': '42',
    ...Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.toLowerCase(), value])),
  };
}

const TYPICAL_ANSWER = {
  headers: {
    'content-type': 'application/json; charset=utf-8',
    'content-length': '17',
    date: new Date().toUTCString(),
    connection: 'keep-alive',
    'keep-alive': 'timeout=5',
  },
  body: '{"received":true}',
};
const BOUNDED_ANSWER = {
  headers: Object.fromEntries(
    Array.from({ length: 20 }, (_, i) => [`x-receiver-header-${i}`, crypto.randomBytes(150).toString('base64').slice(0, 200)]),
  ),
  body: crypto.randomBytes(750).toString('base64').slice(0, 1000),
};

async function fill(db: Db, answer: { headers: Record<string, string>; body: string }): Promise<void> {
  const account = crypto.randomUUID();
  const webhook = crypto.randomUUID();
  for (let done = 0; done < ATTEMPTS; done += BATCH) {
    const rows: AttemptRow[] = [];
    for (let i = 0; i < Math.min(BATCH, ATTEMPTS - done); i++) {
      const delivery = { account_id: account, webhook_id: webhook, id: crypto.randomUUID(), url: 'https://receiver.example.com/hooks/merx' };
      const outcome = {
        statusCode: 200,
        error: null,
        responseBody: answer.body,
        requestHeaders: requestHeaders(delivery.id, crypto.randomUUID()),
        responseHeaders: answer.headers,
      };
      rows.push(attemptRow(delivery, outcome, 'automatic', new Date(), 40 + (i % 200)));
    }
    await insertAttempts(db, rows);
  }
  await db.exec('VACUUM (ANALYZE) webhook_attempts');
}

interface Sizes {
  heap: number;
  toast: number;
  indexes: number;
  total: number;
}

async function sizes(db: Db): Promise<Sizes> {
  const { rows } = await db.query<Sizes>(
    `SELECT pg_relation_size('webhook_attempts')::bigint AS heap,
            coalesce(pg_total_relation_size(reltoastrelid), 0)::bigint AS toast,
            pg_indexes_size('webhook_attempts')::bigint AS indexes,
            pg_total_relation_size('webhook_attempts')::bigint AS total
       FROM pg_class WHERE relname = 'webhook_attempts'`,
  );
  return rows[0];
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

await run(async () => {
  const rows: string[] = [];
  for (const [name, answer] of [
    ['typical answer (200, 5 headers, 17-character body)', TYPICAL_ANSWER],
    ['at the bounds (20 headers of 200 characters, 1,000-character body)', BOUNDED_ANSWER],
  ] as const) {
    const db = await openDb({ databaseUrl: await createDatabase(), dataDir: '', poolMax: 2 });
    try {
      await migrateDatabase(db);
      const started = performance.now();
      await fill(db, answer);
      const s = await sizes(db);
      const perAttempt = Math.round(s.total / ATTEMPTS);
      log(`${name}: ${ATTEMPTS} attempts in ${((performance.now() - started) / 1000).toFixed(1)} s, ${mb(s.total)} MB, ${perAttempt} bytes each`);
      rows.push(`| ${name} | ${mb(s.heap)} | ${mb(s.toast)} | ${mb(s.indexes)} | **${mb((s.total * 100_000) / ATTEMPTS)}** | ${perAttempt} |`);
    } finally {
      await db.close();
    }
  }
  const section = [
    `## ${new Date().toISOString()}`,
    '',
    `- Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}; Node ${process.version}. ${ATTEMPTS.toLocaleString('en-US')} first attempts that succeed, written ${BATCH} a statement through insertAttempts(), then VACUUM (ANALYZE).`,
    "- Each row is attemptRow() of the sender's request headers (both signature schemes, one live secret) and the answer below.",
    '',
    '| attempts | table MB | TOAST MB | indexes MB | MB per 100,000 attempts | bytes per attempt |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
  const header = '# The attempt log on disk (issue 30)\n\nWritten by `node bench/attempt-log-size.ts`; each run appends its section.\n\n';
  fs.writeFileSync(RESULTS, (fs.existsSync(RESULTS) ? fs.readFileSync(RESULTS, 'utf8') : header) + section + '\n');
  log(`wrote ${path.relative(process.cwd(), RESULTS)}`);
});
