// `npx merx <command>` (OPERATOR_API Running): the operator's operations from
// a shell, printing JSON. Works on the same database the service uses; `listen`
// is an HTTP client of a running service instead (src/cli/listen.ts).
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { onDirectSession, openDb } from './platform/open-db.ts';
import type { Db } from './platform/db.ts';
import { DataDirInUseError } from './platform/data-dir.ts';
import { migrateDatabase } from './views.ts';
import { PRESETS, isScope, type Preset } from './platform/scopes.ts';
import { createAccount, issueKey, revokeKey } from './modules/accounts/service.ts';
import { seedAccount } from './operator/seed.ts';
import { toAppError } from './platform/errors.ts';
import { openSecretsAtRest, resealAll } from './platform/sealed-columns.ts';
import type { SecretBox } from './platform/secret-box.ts';
import { runningServerAddress, serverAddressOf } from './cli/server-address.ts';
import { ListenError } from './cli/listen.ts';

const USAGE = `usage: merx <command> [options]
  migrate                                         apply database migrations
  serve                                           start the service (same as npm start)
  courier-sim [--port 3100]                       run the courier simulator on its own (COURIER_<A|B|C>_URL=http://host:port/courier_a ...)
  accounts create --name N --email E [--plan pro|business|free]
  keys issue --account ID (--preset fulfilment|read_only|bridge | --scopes a,b) [--name N] [--expires-at TIME]
  keys revoke --key KEY_ID
  seed --account ID [--orders 1000] [--products 50] [--customers N] [--seed 1]
  secrets reseal                                  re-seal every secret at rest under the first key of ENCRYPTION_KEYS (key rotation)
  listen --forward-to URL [--events order.created,...] [--since TIME] [--base-url URL] [--key KEY]
                                                  forward the account's events to a local URL, signed as webhooks
                                                  (--key defaults to MERX_API_KEY; --base-url to MERX_BASE_URL, else the server running from DATA_DIR, else http://localhost:PORT)
Uses DATABASE_URL, else embedded PGlite in DATA_DIR (default ./data); listen uses the API only.`;

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function need(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || !value) throw new Error(`--${name} is required\n\n${USAGE}`);
  return value;
}

/**
 * PGlite has one writer: while `npm start` holds DATA_DIR, the CLI cannot open
 * it. Say so, and point at what works while the server runs.
 */
function explainBusyDataDir(err: DataDirInUseError, config: Config): Error {
  // The URL the running server recorded (it may listen on another PORT than this shell's); else this shell's config.
  const base = serverAddressOf(config.dataDir, err.holderPid) ?? config.publicBaseUrl;
  return new Error(
    `${err.message}.\n` +
      `The embedded database (PGlite in ${config.dataDir}) has a single writer, and another Merx process (${err.holderPid}, usually the server started by npm start) holds it.\n` +
      'While it runs, use the server instead:\n' +
      `  - the operator console: ${base}/admin (sign in with the operator token the server printed)\n` +
      `  - the operator API: curl -X POST ${base}/admin/api/accounts/<account id>/keys -H "Authorization: Bearer <operator token>" \\\n` +
      `      -H 'content-type: application/json' -d '{"name": "cli", "preset": "fulfilment"}'\n` +
      'or stop the server first. With DATABASE_URL (PostgreSQL) the CLI and any number of servers share the database.',
  );
}

/**
 * Issue 41: where `merx listen` looks, and why, so it never targets :3000 silently: --base-url, MERX_BASE_URL,
 * the server running from this DATA_DIR (it records its address), else PUBLIC_BASE_URL or http://localhost:PORT.
 */
function listenBaseUrl(given: string | undefined): [string, string] {
  if (given) return [given, '--base-url'];
  if (process.env.MERX_BASE_URL) return [process.env.MERX_BASE_URL, 'MERX_BASE_URL'];
  const dataDir = process.env.DATA_DIR || './data';
  const running = runningServerAddress(dataDir);
  if (running) return [running, `the server running from ${dataDir}`];
  if (process.env.PUBLIC_BASE_URL) return [process.env.PUBLIC_BASE_URL, 'PUBLIC_BASE_URL'];
  const port = process.env.PORT || '3000';
  return [`http://localhost:${port}`, `the default (no --base-url, MERX_BASE_URL or server running from ${dataDir})`];
}

async function withDb<T>(fn: (db: Db, secrets: SecretBox) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDb(config).catch((err) => {
    throw err instanceof DataDirInUseError ? explainBusyDataDir(err, config) : err;
  });
  try {
    await onDirectSession(db, config, (direct) => migrateDatabase(direct));
    // The same keys as the service, checked the same way: the CLI may seal (plaintext left from before migration 020) and reseal.
    return await fn(db, await openSecretsAtRest(db, config));
  } finally {
    await db.close();
  }
}

async function run(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' }, email: { type: 'string' }, plan: { type: 'string' }, account: { type: 'string' },
      preset: { type: 'string' }, scopes: { type: 'string' }, key: { type: 'string' }, orders: { type: 'string' },
      products: { type: 'string' }, customers: { type: 'string' }, seed: { type: 'string' }, help: { type: 'boolean' },
      port: { type: 'string' }, 'forward-to': { type: 'string' }, events: { type: 'string' }, 'base-url': { type: 'string' },
      since: { type: 'string' }, 'expires-at': { type: 'string' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || !command) return void process.stdout.write(`${USAGE}\n`);
  switch (command) {
    case 'serve':
      await import('./main.ts');
      return;
    case 'courier-sim': {
      const { startStandaloneSimulator } = await import('./couriers/simulator/standalone.ts');
      const { SIMULATED_COURIERS } = await import('./couriers/simulator/simulated-couriers.ts');
      const { courierProviders } = await import('./couriers/catalog.ts');
      const url = await startStandaloneSimulator(Number(values.port ?? 3100));
      const settings = courierProviders().filter((p) => SIMULATED_COURIERS.has(p.slug)).map((p) => `${p.urlVariable}=${url}/${p.slug}`);
      process.stdout.write(`courier simulator at ${url}: set ${settings.join(', ')}\n`);
      return;
    }
    case 'listen': {
      const { listen } = await import('./cli/listen.ts');
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      const [baseUrl, baseUrlFrom] = listenBaseUrl(values['base-url']);
      return listen({
        forwardTo: need(values, 'forward-to'),
        baseUrl,
        baseUrlFrom,
        key: values.key ?? process.env.MERX_API_KEY ?? '',
        events: (values.events ?? '').split(',').map((e) => e.trim()).filter(Boolean),
        since: values.since,
        signal: stop.signal,
      });
    }
    case 'migrate':
      return print({ applied: await withDb((db) => onDirectSession(db, loadConfig(), (direct) => migrateDatabase(direct))) });
    case 'accounts create': {
      const plan = (values.plan ?? 'pro') as 'pro' | 'business' | 'free';
      if (!['pro', 'business', 'free'].includes(plan)) throw new Error('--plan must be pro, business or free');
      return print({ data: await withDb((db) => db.tx((tx) => createAccount(tx, { name: need(values, 'name'), email: need(values, 'email'), plan }))) });
    }
    case 'keys issue': {
      const account = need(values, 'account');
      let scopes;
      if (values.preset) {
        if (!(values.preset in PRESETS)) throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(', ')}`);
        scopes = PRESETS[values.preset as Preset];
      } else {
        scopes = need(values, 'scopes').split(',').map((s) => s.trim());
        const unknown = scopes.filter((s) => !isScope(s));
        if (unknown.length) throw new Error(`unknown scopes: ${unknown.join(', ')}`);
      }
      return print(await withDb((db) => db.tx((tx) => issueKey(tx, account, values.name ?? 'cli', scopes as never, 'direct', values['expires-at'] ?? null))));
    }
    case 'keys revoke':
      return print({ data: await withDb((db) => db.tx((tx) => revokeKey(tx, need(values, 'key')))) });
    case 'seed': {
      const count = (name: string, fallback: number) => (values[name as keyof typeof values] ? Number(values[name as keyof typeof values]) : fallback);
      const input = { orders: count('orders', 1000), products: count('products', 50), customers: values.customers ? Number(values.customers) : undefined, seed: count('seed', 1) };
      if (![input.orders, input.products].every((n) => Number.isInteger(n) && n >= 0)) throw new Error('--orders and --products must be whole numbers');
      return print({ data: await withDb((db) => db.tx((tx) => seedAccount(tx, need(values, 'account'), input))) });
    }
    case 'secrets reseal':
      return print(await withDb((db, secrets) => resealAll(db, secrets)));
    default:
      throw new Error(`unknown command "${command}"\n\n${USAGE}`);
  }
}

run(process.argv.slice(2)).catch((err) => {
  const known = err instanceof ConfigError || err instanceof ListenError || (err instanceof Error && !('code' in err));
  const message = known ? err.message : toAppError(err).message;
  process.stderr.write(`merx: ${message}\n`);
  process.exit(1);
});
