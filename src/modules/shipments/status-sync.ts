// Getting courier statuses in: the 15-minute poll of the polled couriers
// (batched per account and courier), and the pushing couriers' reports.
import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../platform/db/db.ts';
import type { PublicRoute } from '../../platform/operations/public-route.ts';
import { AppError, unauthorized } from '../../platform/contract/errors.ts';
import type { CourierSlug } from '../../couriers/adapter.ts';
import { courierProviders } from '../../couriers/catalog.ts';
import type { CourierAdapters } from '../../couriers/adapters.ts';
import type { OrderChangeDeps } from '../orders/commands.ts';
import { courierAccountFor, integrationByPushToken, pushPath } from './integrations.ts';
import { applyCourierEvents } from './mirror.ts';

const POLL_BATCH = 100;

export async function runCourierPoll(db: Db, couriers: CourierAdapters, deps: OrderChangeDeps, log: FastifyBaseLogger): Promise<number> {
  const { rows } = await db.query<{ account_id: string; courier_slug: CourierSlug; id: string; tracking_number: string }>(
    `SELECT s.account_id, s.courier_slug, s.id, s.tracking_number FROM shipments s
       JOIN courier_integrations i ON i.account_id = s.account_id AND i.slug = s.courier_slug AND i.enabled
      WHERE s.courier_slug = ANY($1::text[]) AND s.status IN ('pending', 'picked_up', 'in_transit') AND s.tracking_number IS NOT NULL
      ORDER BY s.account_id, s.courier_slug, s.created_at`,
    [couriers.polled()],
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
        const events = await couriers.adapter(slug).fetchStatuses(
          account,
          batch.map((s) => s.tracking_number),
        );
        for (const shipment of batch) {
          const own = events.filter((e) => e.trackingNumber === shipment.tracking_number);
          if (own.length && (await applyCourierEvents(db, deps, accountId, shipment.id, own))) changed++;
        }
      } catch (err) {
        // One courier or account failing must not stop the others; the next pass tries again.
        const retryable = err instanceof AppError && err.retryable;
        log.warn({ err: (err as Error).message, accountId, slug, retryable }, 'courier poll failed for a batch');
        // A courier that is down or timing out would fail this group's next batches the same way, each after
        // its own timeout; leave them to the next pass. A batch the courier refused does not stop the batches after it.
        if (retryable) break;
      }
    }
  }
  return changed;
}

/** Pushing couriers report here with the per-integration token they were given at waybill creation (mounted by the transport layer). */
export function courierPushRoutes(): PublicRoute[] {
  return courierProviders().flatMap((provider) => {
    const push = provider.push;
    if (!push) return [];
    const route: PublicRoute = {
      name: `${provider.slug}_push`,
      method: 'POST',
      path: pushPath(provider.slug),
      summary: `${provider.slug} reports statuses`,
      description: 'The courier pushes status events for its waybills with the token it was given at waybill creation.',
      tags: ['Shipments'],
      output: Type.Object({ ok: Type.Literal(true) }),
      documented: false,
      async handler(services, request) {
        const token = push.token(request.headers);
        const accountId = token ? await integrationByPushToken(services.db, provider.slug, token) : null;
        if (!accountId) throw unauthorized('unknown courier integration token');
        const report = push.read(request.body);
        const { rows } = await services.db.query<{ id: string }>(
          'SELECT id FROM shipments WHERE account_id = $1 AND courier_slug = $2 AND tracking_number = $3',
          [accountId, provider.slug, report.trackingNumber],
        );
        if (!rows[0]) throw new AppError('not_found', 'unknown tracking number');
        await applyCourierEvents(services.db, { notifier: services.notifier }, accountId, rows[0].id, report.events);
        // Issue 32: a push is a write to the account like an API write: its next reads wait for a replica that has it.
        await services.reads?.noteWrite(accountId);
        return { status: 200, body: { ok: true } };
      },
    };
    return [route];
  });
}
