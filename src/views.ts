// Every view the service declares with defineView (issue 29), and what a
// database needs before an instance serves from it: the migrations, the
// stored views' upkeep, and the documents of rows written before that upkeep.
import type { Db } from './platform/db.ts';
import { migrate } from './platform/migrate.ts';
import type { View } from './platform/stored-view.ts';
import { backfillViews } from './platform/view-upkeep.ts';
import { orderView } from './modules/orders/view.ts';
import { shipmentView } from './modules/shipments/view.ts';
import { productView } from './modules/products/view.ts';

export const views: readonly View[] = [orderView, shipmentView, productView];

/** Migrates, then writes every stored document not yet written; returns the migrations (and views) applied. */
export async function migrateDatabase(db: Db, log?: { info: (fields: object, message: string) => void }): Promise<string[]> {
  const applied = await migrate(db, views);
  for (const done of await backfillViews(db, views)) {
    log?.info({ view: done.view, rows: done.rows, batches: done.batches, longest_batch_ms: Math.round(done.longestBatchMs) }, 'stored view documents written');
  }
  return applied;
}
