// Getting courier statuses in: the 15-minute poll for courier_a and
// courier_b (batched per account and courier), and courier_c's push.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Db } from '../../platform/db.ts';
import { AppError, unauthorized } from '../../platform/errors.ts';
import { isSupportedInstant } from '../../platform/dates.ts';
import type { CourierEvent, CourierSlug } from '../../couriers/adapter.ts';
import { courierCEvent } from '../../couriers/courier-c.ts';
import type { Couriers } from '../../couriers/registry.ts';
import type { OrderChangeDeps } from '../orders/commands.ts';
import { courierAccountFor, integrationByPushToken, PUSH_PATH } from './integrations.ts';
import { applyCourierEvents } from './mirror.ts';

const POLL_BATCH = 100;

export async function runCourierPoll(db: Db, couriers: Couriers, deps: OrderChangeDeps, log: FastifyBaseLogger): Promise<number> {
  const { rows } = await db.query<{ account_id: string; courier_slug: CourierSlug; id: string; tracking_number: string }>(
    `SELECT s.account_id, s.courier_slug, s.id, s.tracking_number FROM shipments s
       JOIN courier_integrations i ON i.account_id = s.account_id AND i.slug = s.courier_slug AND i.enabled
      WHERE s.courier_slug IN ('courier_a', 'courier_b') AND s.status IN ('pending', 'picked_up', 'in_transit') AND s.tracking_number IS NOT NULL
      ORDER BY s.account_id, s.courier_slug, s.created_at`,
  );
  const groups = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = `${row.account_id}/${row.courier_slug}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(row);
  }
  let changed = 0;
  for (const shipments of groups.values()) {
    const { account_id: accountId, courier_slug: slug } = shipments[0];
    for (let i = 0; i < shipments.length; i += POLL_BATCH) {
      const batch = shipments.slice(i, i + POLL_BATCH);
      try {
        const account = await courierAccountFor(db, couriers, accountId, slug);
        const events = await couriers.adapter(slug).fetchStatuses(account, batch.map((s) => s.tracking_number));
        for (const shipment of batch) {
          const own = events.filter((e) => e.trackingNumber === shipment.tracking_number);
          if (own.length && (await applyCourierEvents(db, deps, accountId, shipment.id, own))) changed++;
        }
      } catch (err) {
        // One courier or account failing must not stop the others; the next pass tries again.
        log.warn({ err: (err as Error).message, accountId, slug }, 'courier poll failed for a batch');
      }
    }
  }
  return changed;
}

/** courier_c reports here with the per-integration token it was given at waybill creation. */
export function registerCourierPush(app: FastifyInstance, deps: { db: Db; orderDeps: OrderChangeDeps }): void {
  app.post(PUSH_PATH, async (request, reply) => {
    const match = /^Token ([A-Za-z0-9]+)$/.exec(request.headers.authorization ?? '');
    const accountId = match ? await integrationByPushToken(deps.db, 'courier_c', match[1]) : null;
    if (!accountId) throw unauthorized('unknown courier integration token');
    const body = request.body as { barcode?: unknown; events?: unknown } | undefined;
    if (typeof body?.barcode !== 'string' || !Array.isArray(body.events)) {
      throw new AppError('validation_failed', 'expected {barcode, events: [{occurred_at, state, note}]}');
    }
    const events: CourierEvent[] = [];
    for (const e of body.events as Array<Record<string, unknown>>) {
      if (typeof e?.occurred_at !== 'string' || !isSupportedInstant(Date.parse(e.occurred_at)) || typeof e.state !== 'string') {
        throw new AppError('validation_failed', 'each event needs occurred_at (ISO 8601, years 0001-9999) and state');
      }
      events.push(courierCEvent(body.barcode, e as { occurred_at: string; state: string; note?: string }));
    }
    const { rows } = await deps.db.query<{ id: string }>(
      "SELECT id FROM shipments WHERE account_id = $1 AND courier_slug = 'courier_c' AND tracking_number = $2",
      [accountId, body.barcode],
    );
    if (!rows[0]) throw new AppError('not_found', 'unknown barcode');
    await applyCourierEvents(deps.db, deps.orderDeps, accountId, rows[0].id, events);
    return reply.code(200).send({ ok: true });
  });
}
