// Bulk synthetic data (OPERATOR_API seed), deterministic for a given `seed`:
// after setseed() the rooms' set-based loaders run in this order, each
// writing its own tables (products, pages, order numbers, orders), then the
// customers room rebuilds its aggregates. Emits no events.
import type { Sql } from '../platform/db/db.ts';
import { AppError } from '../platform/contract/errors.ts';
import { requireAccount, seedPages } from '../modules/storefront/service.ts';
import { reserveOrderNumbers } from '../modules/accounts/service.ts';
import { seedProducts } from '../modules/products/seed.ts';
import { seedOrders } from '../modules/orders/seed.ts';
import { rebuildCustomers } from '../modules/customers/aggregates.ts';
import { COURIER_SLUGS } from '../couriers/catalog.ts';

export interface SeedInput {
  orders: number;
  products: number;
  customers?: number;
  seed?: number;
}

export async function seedAccount(tx: Sql, accountId: string, input: SeedInput) {
  await requireAccount(tx, accountId);
  const customers = input.customers ?? Math.max(1, Math.ceil(input.orders / 3));
  await tx.query('SELECT setseed($1)', [((input.seed ?? 1) % 1000) / 1000]);
  await seedProducts(tx, accountId, input.products);
  if (input.orders === 0) return { orders: 0, products: input.products };
  const { rows: catalog } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM products WHERE account_id = $1', [accountId]);
  if (catalog[0].n === 0) throw new AppError('validation_failed', 'seeding orders needs products: pass products > 0');
  await seedPages(tx, accountId, input.products);
  const firstNumber = await reserveOrderNumbers(tx, accountId, input.orders);
  await seedOrders(tx, accountId, { count: input.orders, customers, firstNumber, courierSlugs: COURIER_SLUGS });
  await rebuildCustomers(tx, accountId);
  return { orders: input.orders, products: input.products };
}
