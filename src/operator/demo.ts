// The demo account a newcomer gets from `npm start` (OPERATOR_API Running):
// created once on an empty database. Issue 41: its key survives restarts of
// the same data, kept like the generated operator token (admin-token.ts): the
// database holds only its hash, the key itself sits in DATA_DIR (0600) so the
// next start can print it again. A new key is issued (and the old demo keys
// revoked) only when that file holds no live demo key: a first start, another
// DATA_DIR, DATA_DIR=memory://, or the key revoked by the operator.
import fs from 'node:fs';
import path from 'node:path';
import type { Db, Sql } from '../platform/db/db.ts';
import { hashApiKey } from '../platform/edge/auth.ts';
import { PRESETS } from '../platform/contract/scopes.ts';
import { createAccount, issueKey, revokeKeysNamed } from '../modules/accounts/service.ts';
import { seedAccount } from './seed.ts';
import { putIntegration } from '../modules/shipments/integrations.ts';
import { COURIER_SLUGS } from '../couriers/catalog.ts';

const DEMO_EMAIL = 'demo@merx.example';
const DEMO_KEY_NAME = 'demo (printed at start)';
/** The file in DATA_DIR that keeps the demo key for the start banner. */
export const DEMO_KEY_FILE = 'demo-key';

export interface DemoAccount {
  accountId: string;
  key: string;
  created: boolean;
  /** Whether the key is the one an earlier start printed (false: issued now). */
  kept: boolean;
  /** Where the key is kept (null with DATA_DIR=memory://). */
  file: string | null;
}

export async function ensureDemoAccount(db: Db, dataDir: string): Promise<DemoAccount> {
  const file = dataDir.startsWith('memory://') ? null : path.join(dataDir, DEMO_KEY_FILE);
  return db.tx(async (tx) => {
    const { rows } = await tx.query<{ id: string }>('SELECT id FROM accounts WHERE email = $1 ORDER BY created_at LIMIT 1', [DEMO_EMAIL]);
    let accountId = rows[0]?.id;
    const created = !accountId;
    if (!accountId) {
      accountId = (await createAccount(tx, { name: 'Demo Shop', email: DEMO_EMAIL, plan: 'pro' })).id as string;
      await seedAccount(tx, accountId, { orders: 250, products: 20, customers: 80, seed: 42 });
      // Every registered courier on: in simulator mode they use the simulator's demo credentials.
      for (const slug of COURIER_SLUGS) await putIntegration(tx, accountId, slug, { enabled: true });
    }
    const kept = await keptKey(tx, accountId, file);
    if (kept) return { accountId, key: kept, created, kept: true, file };
    await revokeKeysNamed(tx, accountId, DEMO_KEY_NAME);
    const issued = await issueKey(tx, accountId, DEMO_KEY_NAME, PRESETS.fulfilment);
    if (file) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${issued.key}\n`, { mode: 0o600 });
    }
    return { accountId, key: issued.key, created, kept: false, file };
  });
}

/** The key in the file, if it is still a live demo key of this account. */
async function keptKey(tx: Sql, accountId: string, file: string | null): Promise<string | null> {
  if (!file || !fs.existsSync(file)) return null;
  const key = fs.readFileSync(file, 'utf8').trim();
  const { rowCount } = await tx.query(
    `SELECT 1 FROM api_keys WHERE account_id = $1 AND name = $2 AND key_hash = $3 AND revoked_at IS NULL
        AND (expires_at IS NULL OR expires_at > now())`,
    [accountId, DEMO_KEY_NAME, hashApiKey(key)],
  );
  return rowCount ? key : null;
}
