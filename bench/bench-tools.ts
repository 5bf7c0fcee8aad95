// What every benchmark script needs around its measurements: a log line
// prefix, undo steps run newest first (on success, failure or Ctrl-C), and a
// fresh PostgreSQL database that is dropped at the end.
import crypto from 'node:crypto';
import pg from 'pg';

export interface Cleanup {
  name: string;
  run: () => Promise<void>;
}

export function benchTools(tag: string, adminUrl: string, databasePrefix: string) {
  const log = (message: string) => process.stdout.write(`[${tag} ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
  const cleanups: Cleanup[] = [];

  async function cleanUp(): Promise<void> {
    while (cleanups.length) {
      const step = cleanups.pop()!;
      await step.run().catch((err) => log(`cleanup "${step.name}" failed: ${err instanceof Error ? err.message : err}`));
    }
  }

  async function adminQuery(text: string): Promise<void> {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  }

  async function createDatabase(): Promise<string> {
    const name = `${databasePrefix}_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${crypto.randomBytes(2).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    cleanups.push({ name: `drop database ${name}`, run: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) });
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    log(`database ${name}`);
    return url.toString();
  }

  /** Runs the benchmark; whatever happens (error, Ctrl-C), the undo steps run and the database is dropped. */
  async function run(main: () => Promise<void>): Promise<void> {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        log(`${signal}: cleaning up`);
        void cleanUp().finally(() => process.exit(130));
      });
    }
    try {
      await main();
    } catch (err) {
      process.exitCode = 1;
      log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    } finally {
      await cleanUp();
      log('database dropped, service stopped');
    }
  }

  return { log, cleanups, cleanUp, adminQuery, createDatabase, run };
}

/** A whole-number setting from the environment, or its default. */
export function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** One HTTP call to a service under test, timed: its status, its parsed body and how long it took. */
export async function timedCall(
  base: string,
  token: string,
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const res = await fetch(base + route, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, ms: performance.now() - started };
}

/** The operator API of a service under test (OPERATOR_API.md), failing loudly on anything but success. */
export async function operatorCall(base: string, token: string, method: string, route: string, body?: unknown) {
  const res = await timedCall(base, token, method, `/admin/api${route}`, body);
  if (res.status >= 300) throw new Error(`operator ${method} ${route} -> ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
