// Every view the service declares with defineView (issue 29), and what a
// database needs before an instance serves from it: the migrations (the
// stored views' upkeep among them). The documents of rows an older
// declaration wrote are rewritten after the instance listens (server.ts,
// view-upkeep.ts startBackfill); reads are correct meanwhile.
import type { Db } from './platform/db/db.ts';
import { migrate } from './platform/db/migrate.ts';
import { type View, mismatchMessage, upkeepMismatches } from './platform/read-path/index.ts';
import { orderView } from './modules/orders/view.ts';
import { shipmentView } from './modules/shipments/view.ts';
import { productView } from './modules/products/view.ts';

export const views: readonly View[] = [orderView, shipmentView, productView];

/** Migrates; returns the migrations applied. Warns of a stored view whose upkeep in the database is not its declaration's. */
export async function migrateDatabase(db: Db, log?: { warn: (fields: object, message: string) => void }): Promise<string[]> {
  const applied = await migrate(db);
  const mismatched = await upkeepMismatches(db, views);
  if (mismatched.length) log?.warn({ views: mismatched }, mismatchMessage(mismatched));
  return applied;
}
