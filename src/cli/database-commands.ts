// The CLI's commands on the database (src/cli.ts): loaded only when one of
// them runs. Each answers what the CLI prints as JSON.
import { loadConfig, type Config } from '../config.ts';
import { onDirectSession, openDb } from '../platform/db/open-db.ts';
import type { Db } from '../platform/db/db.ts';
import { DataDirInUseError } from '../platform/db/data-dir.ts';
import { migrateDatabase, views } from '../views.ts';
import { backfillViews } from '../platform/read-path/index.ts';
import { PRESETS, isScope, type Preset } from '../platform/contract/scopes.ts';
import { createAccount, issueKey, revokeKey } from '../modules/accounts/service.ts';
import { seedAccount } from '../operator/seed.ts';
import { openSecretsAtRest, resealAll } from '../platform/edge/sealed-columns.ts';
import type { SecretBox } from '../platform/edge/secret-box.ts';
import { serverAddressOf } from './server-address.ts';

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

export async function runDatabaseCommand(
  command: string,
  values: Record<string, string | undefined>,
  need: (name: string) => string,
): Promise<unknown> {
  switch (command) {
    case 'migrate':
      return withDb(async (db) => {
        const applied = await onDirectSession(db, loadConfig(), (direct) => migrateDatabase(direct));
        // A release step that migrates leaves every stored document current: the instances then start with nothing to rewrite.
        const written = await backfillViews(db, views);
        return { applied, ...(written.length ? { documents_written: written.map(({ view, rows }) => ({ view, rows })) } : {}) };
      });
    case 'accounts create': {
      const plan = (values.plan ?? 'pro') as 'pro' | 'business' | 'free';
      if (!['pro', 'business', 'free'].includes(plan)) throw new Error('--plan must be pro, business or free');
      return { data: await withDb((db) => db.tx((tx) => createAccount(tx, { name: need('name'), email: need('email'), plan }))) };
    }
    case 'keys issue': {
      const account = need('account');
      let scopes;
      if (values.preset) {
        if (!(values.preset in PRESETS)) throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(', ')}`);
        scopes = PRESETS[values.preset as Preset];
      } else {
        scopes = need('scopes')
          .split(',')
          .map((s) => s.trim());
        const unknown = scopes.filter((s) => !isScope(s));
        if (unknown.length) throw new Error(`unknown scopes: ${unknown.join(', ')}`);
      }
      return await withDb((db) =>
        db.tx((tx) => issueKey(tx, account, values.name ?? 'cli', scopes as never, 'direct', values['expires-at'] ?? null)),
      );
    }
    case 'keys revoke':
      return { data: await withDb((db) => db.tx((tx) => revokeKey(tx, need('key')))) };
    case 'seed': {
      const count = (name: string, fallback: number) => (values[name] ? Number(values[name]) : fallback);
      const input = {
        orders: count('orders', 1000),
        products: count('products', 50),
        customers: values.customers ? Number(values.customers) : undefined,
        seed: count('seed', 1),
      };
      if (![input.orders, input.products].every((n) => Number.isInteger(n) && n >= 0))
        throw new Error('--orders and --products must be whole numbers');
      return { data: await withDb((db) => db.tx((tx) => seedAccount(tx, need('account'), input))) };
    }
    case 'secrets reseal':
      return await withDb((db, secrets) => resealAll(db, secrets));
    default:
      throw new Error(`unknown command "${command}"`);
  }
}
