// The daily low-stock check: inventory.low_stock once per product per UTC
// day, made idempotent across instances by a unique key, not a memory flag.
import crypto from 'node:crypto';
import type { Db } from '../../platform/db/db.ts';
import { emit } from '../../platform/db/outbox.ts';

export async function runLowStockCheck(db: Db, now: Date): Promise<number> {
  const day = now.toISOString().slice(0, 10);
  const { rows } = await db.query(
    `SELECT p.account_id, p.id, p.name, p.sku, p.stock_quantity, coalesce(p.low_stock_threshold, a.default_threshold) AS threshold
       FROM products p JOIN accounts a ON a.id = p.account_id
      WHERE a.active AND p.active AND p.delivery_type = 'physical' AND p.stock_quantity IS NOT NULL
        AND p.stock_quantity <= coalesce(p.low_stock_threshold, a.default_threshold)
        AND NOT EXISTS (SELECT 1 FROM low_stock_alerts l WHERE l.account_id = p.account_id AND l.product_id = p.id AND l.day = $1::date)`,
    [day],
  );
  let emitted = 0;
  for (const p of rows) {
    await db.tx(async (tx) => {
      const eventId = crypto.randomUUID();
      const { rowCount } = await tx.query(
        `INSERT INTO low_stock_alerts (account_id, product_id, day, event_id) VALUES ($1, $2, $3::date, $4)
         ON CONFLICT DO NOTHING RETURNING event_id`,
        [p.account_id, p.id, day, eventId],
      );
      if (!rowCount) return; // another instance got there first
      await emit(
        tx,
        p.account_id,
        'inventory.low_stock',
        {
          product: { id: p.id, name: p.name, sku: p.sku },
          stock_quantity: p.stock_quantity,
          threshold: p.threshold,
        },
        { id: eventId },
      );
      emitted++;
    });
  }
  return emitted;
}
