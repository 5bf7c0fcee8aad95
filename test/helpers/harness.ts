// Black-box test harness: starts the real service (in this process, on a
// random port) against PGlite in memory or, when DATABASE_URL is set, the
// real PostgreSQL; tests then speak plain HTTP to it. Factories make a fresh
// account per test.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startService, type RunningService } from '../../src/server.ts';
import { openDb } from '../../src/platform/db/open-db.ts';
import type { PgliteDb } from '../../src/platform/db/pglite-db.ts';
import { migrateDatabase } from '../../src/views.ts';

const MIGRATIONS = path.join(import.meta.dirname, '../../src/platform/db/migrations');

/**
 * A freshly migrated PGlite data directory, dumped once and shared by every
 * test process through a file keyed by the migrations' content: creating a
 * PGlite database from nothing costs seconds, loading the dump a fraction.
 */
async function pgliteTemplate(): Promise<Blob> {
  const hash = crypto.createHash('sha256');
  for (const file of fs.readdirSync(MIGRATIONS).sort()) hash.update(file).update(fs.readFileSync(path.join(MIGRATIONS, file)));
  const file = path.join(os.tmpdir(), `merx-pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
  if (!fs.existsSync(file)) {
    const db = (await openDb({ databaseUrl: null, dataDir: 'memory://' })) as PgliteDb;
    await migrateDatabase(db);
    const dump = Buffer.from(await (await db.dump()).arrayBuffer());
    await db.close();
    const partial = `${file}.${process.pid}`;
    fs.writeFileSync(partial, dump);
    fs.renameSync(partial, file); // atomic: a parallel process sees all of it or none
  }
  return new Blob([fs.readFileSync(file)]);
}

export const ADMIN_TOKEN = 'test-operator-token-0123456789';
/**
 * The suite's one encryption key (issue 27), as instances of one deployment
 * share theirs: every test process and child seals and opens with it, on a
 * PostgreSQL database they all share.
 */
export const ENCRYPTION_KEYS = `suite:${Buffer.alloc(32, 7).toString('base64')}`;

export interface TestService {
  url: string;
  service: RunningService;
  close(): Promise<void>;
}

/**
 * A change made in SQL behind the service's back (a test's stand-in for time passing), noted as a write of the
 * account as the service notes its own: the account's next reads, where a read replica serves them (CI's pooled
 * stage), wait until the replica has replayed it, or go to the primary.
 */
export async function changeBehindTheService(svc: TestService, accountId: string, sql: string, params: unknown[]): Promise<void> {
  await svc.service.db.query(sql, params);
  await svc.service.services.reads?.noteWrite(accountId);
}

export async function startTestService(env: Record<string, string> = {}, options: { reactions?: boolean } = {}): Promise<TestService> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: 'memory://',
    ADMIN_TOKEN,
    ENCRYPTION_KEYS,
    LOG_LEVEL: 'silent',
    SEED_DEMO: '0',
    DEPLOY_SHA: 'abcdef0123456789',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // Issue 32's run: PgBouncer (DATABASE_URL), the primary itself and a read replica. An env naming another database names all three.
    ...(process.env.DATABASE_DIRECT_URL && !env.DATABASE_URL ? { DATABASE_DIRECT_URL: process.env.DATABASE_DIRECT_URL } : {}),
    ...(process.env.DATABASE_READ_URLS && !env.DATABASE_URL ? { DATABASE_READ_URLS: process.env.DATABASE_READ_URLS } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...env,
  });
  const inMemory = !config.databaseUrl && config.dataDir.startsWith('memory://');
  const service = await startService(config, { ...options, ...(inMemory ? { pgliteTemplate: await pgliteTemplate() } : {}) });
  return { url: service.url, service, close: () => service.close() };
}

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function http<T = any>(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: any = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** The operator API (OPERATOR_API.md) with the test operator token. */
export function operator(base: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await http(base, method, `/admin/api${path}`, { token: ADMIN_TOKEN, body });
    if (res.status >= 300) throw new Error(`operator ${method} ${path} -> ${res.status} ${res.text}`);
    return res.body;
  };
  return {
    call,
    async createAccount(input: Record<string, unknown> = {}) {
      const n = Math.random().toString(36).slice(2, 8);
      return (await call('POST', '/accounts', { name: `Shop ${n}`, email: `owner-${n}@example.com`, ...input })).data;
    },
    async issueKey(accountId: string, spec: { preset?: string; scopes?: string[] } = { preset: 'fulfilment' }) {
      const res = await call('POST', `/accounts/${accountId}/keys`, { name: 'test', ...spec });
      return res.key as string;
    },
    async createProduct(accountId: string, input: Record<string, unknown> = {}) {
      return (await call('POST', `/accounts/${accountId}/products`, { name: 'Mug', price: 12.5, sku: 'MUG-1', ...input })).data;
    },
    async createPage(accountId: string, productIds: string[]) {
      return (await call('POST', `/accounts/${accountId}/pages`, { title: 'Landing', product_ids: productIds })).data;
    },
    async checkout(accountId: string, input: Record<string, unknown> = {}) {
      const order = {
        customer: { name: 'Ana Petrova', email: 'ana@example.com', phone: '+359888000111' },
        shipping: {
          address: 'ul. Vitosha 1',
          city: 'Sofia',
          zip: '1000',
          courier_slug: 'courier_a',
          courier_delivery_mode: 'office',
          courier_office_id: 101,
        },
        legacy: { product_name: 'Mug', quantity: 1, unit_price: 12.5 },
        payment_method: 'cod',
        ...input,
      };
      return (await call('POST', `/accounts/${accountId}/orders`, order)).data;
    },
    async setStatus(orderId: string, status: string, source?: string) {
      return (await call('POST', `/orders/${orderId}/status`, source ? { status, source } : { status })).data;
    },
    async pay(orderId: string, paymentStatus = 'paid') {
      return (await call('POST', `/orders/${orderId}/payment`, { payment_status: paymentStatus })).data;
    },
    async messages(accountId: string) {
      return (await call('GET', `/accounts/${accountId}/messages`)).data as any[];
    },
  };
}

/** A fresh account with one key: the usual start of a test. */
export async function freshTenant(base: string, spec: { preset?: string; scopes?: string[] } = { preset: 'fulfilment' }) {
  const op = operator(base);
  const account = await op.createAccount();
  const key = await op.issueKey(account.id, spec);
  return { op, account, accountId: account.id as string, key };
}

/** Events the outbox holds for an account, in the order they were written (read straight from the database: the outbox has no public read API yet). */
export async function outboxEvents(service: RunningService, accountId: string) {
  const { rows } = await service.db.query(
    'SELECT id, event, account_id, api_version, created_at, data FROM events WHERE account_id = $1 ORDER BY seq',
    [accountId],
  );
  return rows;
}

/** /healthz less its `replicas` (listed when DATABASE_READ_URLS is set, as in CI's pooled stage): for tests about its other fields. */
export function healthBesidesReplicas(body: Record<string, unknown>): Record<string, unknown> {
  const { replicas: _replicas, ...rest } = body;
  return rest;
}
