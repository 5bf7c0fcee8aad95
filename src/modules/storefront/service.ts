// The storefront side the operator API stands in for: pages, imported
// contacts and abandoned carts (inputs to customers and segments).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { notFound } from '../../platform/contract/errors.ts';

export async function requireAccount(sql: Sql, accountId: string): Promise<void> {
  const { rowCount } = await sql.query('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
  if (!rowCount) throw notFound('account');
}

export async function createPage(tx: Sql, accountId: string, publicBaseUrl: string, input: { title: string; product_ids: string[] }) {
  await requireAccount(tx, accountId);
  const id = crypto.randomUUID();
  await tx.query('INSERT INTO pages (id, account_id, title, product_ids) VALUES ($1, $2, $3, $4)', [id, accountId, input.title, input.product_ids]);
  return { id, title: input.title, product_ids: input.product_ids, public_url: `${publicBaseUrl}/p/${id}` };
}

export async function importContact(tx: Sql, accountId: string, input: { name?: string; email?: string; phone?: string }) {
  await requireAccount(tx, accountId);
  const { rows } = await tx.query(
    'INSERT INTO contacts (id, account_id, name, email, phone) VALUES ($1, $2, $3, $4, $5) RETURNING id, name, email, phone, created_at',
    [crypto.randomUUID(), accountId, input.name ?? null, input.email ?? null, input.phone ?? null],
  );
  return rows[0];
}

export async function recordAbandonedCart(tx: Sql, accountId: string, input: { email?: string; phone?: string }) {
  await requireAccount(tx, accountId);
  const { rows } = await tx.query(
    'INSERT INTO abandoned_carts (id, account_id, email, phone) VALUES ($1, $2, $3, $4) RETURNING id, email, phone, created_at',
    [crypto.randomUUID(), accountId, input.email ?? null, input.phone ?? null],
  );
  return rows[0];
}

/** The operator's seed: one landing page per ten of the account's newest `products` (at least one), each selling its products. */
export async function seedPages(tx: Sql, accountId: string, products: number): Promise<void> {
  await tx.query(
    `INSERT INTO pages (id, account_id, title, product_ids)
     SELECT gen_random_uuid(), $1, 'Landing ' || grp, array_agg(id)
       FROM (SELECT id, (row_number() OVER (ORDER BY created_at DESC, id)) / 10 AS grp
               FROM products WHERE account_id = $1 ORDER BY created_at DESC LIMIT greatest($2::int, 1)) p
      GROUP BY grp`,
    [accountId, products],
  );
}
