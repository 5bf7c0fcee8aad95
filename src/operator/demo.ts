// The demo account a newcomer gets from `npm start` (OPERATOR_API Running):
// created once on an empty database; a fresh demo key is issued at every
// start, because a key can only be shown when it is issued.
import type { Db } from '../platform/db.ts';
import { PRESETS } from '../platform/scopes.ts';
import { createAccount, issueKey, revokeKeysNamed } from '../modules/accounts/service.ts';
import { seedAccount } from './seed.ts';
import { putIntegration } from '../modules/shipments/integrations.ts';
import { COURIER_SLUGS } from '../couriers/catalog.ts';

const DEMO_EMAIL = 'demo@merx.example';
const DEMO_KEY_NAME = 'demo (printed at start)';

export async function ensureDemoAccount(db: Db): Promise<{ accountId: string; key: string; created: boolean }> {
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
    await revokeKeysNamed(tx, accountId, DEMO_KEY_NAME);
    const issued = await issueKey(tx, accountId, DEMO_KEY_NAME, PRESETS.fulfilment);
    return { accountId, key: issued.key, created };
  });
}
