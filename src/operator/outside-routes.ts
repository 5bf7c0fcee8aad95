// Operator API: the outside world and the scheduled jobs (OPERATOR_API.md "The outside world").
import { Type } from 'typebox';
import { Closed, StrictDate, Uuid } from '../platform/contract/schema.ts';
import { AppError } from '../platform/contract/errors.ts';
import { listSinkCaptures } from '../modules/webhooks/delivery/sink.ts';
import { JOBS } from '../workers/schedule.ts';
import { recordCourierEvent } from '../couriers/simulator/routes.ts';
import type { NormalizedStatus } from '../couriers/adapter.ts';
import { SIM_MODES, type SimMode } from '../couriers/simulator/simulated-courier.ts';
import { CourierSlugSchema as Slug, SHIPMENT_STATUSES } from '../modules/shipments/schema.ts';
import { putIntegration } from '../modules/shipments/integrations.ts';
import { requireAccount } from '../modules/storefront/service.ts';
import type { OperatorServices } from './route.ts';
import { BRIEF_STATUSES, setBriefStatus } from '../modules/bridge/briefs.ts';
import { recordActivity } from '../modules/bridge/facts.ts';
import { adminRoute } from './route.ts';

const JsonObject = (description: string) =>
  Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true, description });

function simulatorOf(s: OperatorServices) {
  if (!s.courierSimulator) throw new AppError('not_found', 'the courier simulator is not running (COURIER_MODE=live)');
  return s.courierSimulator;
}

export const outsideRoutes = [
  adminRoute({
    name: 'set_brief_status',
    method: 'POST',
    path: '/briefs/:id/status',
    tags: ['Outside world'],
    summary: 'The admin moves a bridge brief along',
    description: 'LIVE briefs carry the asset_id (and public_url) of what they produced.',
    params: Closed({ id: Uuid() }),
    body: Closed({
      status: Type.Unsafe<string>({ type: 'string', enum: [...BRIEF_STATUSES] }),
      reason: Type.Optional(Type.String({ maxLength: 2000 })),
      fail_code: Type.Optional(Type.String({ maxLength: 100 })),
      asset_id: Type.Optional(Uuid()),
      public_url: Type.Optional(Type.String({ maxLength: 2000 })),
    }),
    output: Closed({ data: Type.Object({ id: Uuid(), status: Type.String() }, { additionalProperties: true }) }),
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx((tx) => setBriefStatus(tx, id, input)) }),
  }),
  adminRoute({
    name: 'record_asset_activity',
    method: 'POST',
    path: '/assets/:id/activity',
    tags: ['Outside world'],
    summary: 'Raw activity behind get_facts',
    description: 'page_visit, registration or attendance on a page, segment or brief-produced asset.',
    params: Closed({ id: Uuid() }),
    body: Closed({
      kind: Type.Unsafe<string>({ type: 'string', enum: ['page_visit', 'registration', 'attendance'] }),
      count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      at: Type.Optional(StrictDate('When it happened (default now).')),
    }),
    output: Closed({ data: Type.Object({ id: Uuid() }, { additionalProperties: true }) }),
    successStatus: 201,
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx((tx) => recordActivity(tx, id, input)) }),
  }),
  adminRoute({
    name: 'put_courier_integration',
    method: 'PUT',
    path: '/accounts/:id/couriers/:slug',
    tags: ['Accounts'],
    summary: "Set up one of the account's courier integrations",
    description:
      "enabled, and the merchant's own credentials for that courier (write-only; the answer lists which keys are set). In simulator mode an " +
      "integration enabled without credentials uses the simulator's demo credentials.",
    params: Closed({ id: Uuid(), slug: Slug }),
    body: Closed({
      enabled: Type.Boolean(),
      credentials: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      sender_origin: Type.Optional(JsonObject('{mode: "address"} or {mode: "office", office_id, office_label?}')),
      shipment_terms: Type.Optional(JsonObject('{cod_type, service_payer?, open_before, refusal_payer}')),
    }),
    output: Closed({ data: Type.Object({ slug: Type.String(), enabled: Type.Boolean() }, { additionalProperties: true }) }),
    handler: async (s, { id, slug, ...input }) => ({
      data: await s.db.tx(async (tx) => (await requireAccount(tx, id), putIntegration(tx, id, slug, input))),
    }),
  }),
  adminRoute({
    name: 'set_courier_mode',
    method: 'POST',
    path: '/courier-sim/:slug/mode',
    tags: ['Outside world'],
    summary: 'Make a simulated courier accept, refuse, not answer, throttle or fail',
    description:
      'ok: accepts; refuse: the courier says no; down: the courier does not answer (callers time out); throttle: 429 with Retry-After: 1; ' +
      'error: 500. With times, only the next that many calls get the mode, then the courier returns to ok.',
    params: Closed({ slug: Slug }),
    body: Closed({
      mode: Type.Unsafe<SimMode>({ type: 'string', enum: [...SIM_MODES] }),
      times: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Only the next this many calls get the mode.' })),
    }),
    output: Closed({ data: Closed({ slug: Type.String(), mode: Type.String() }) }),
    handler: async (s, { slug, mode, times }) => {
      const simulator = simulatorOf(s);
      if (!simulator.plays(slug)) throw new AppError('not_found', `the simulator does not play ${slug}`);
      await simulator.setMode(slug, mode, times);
      return { data: { slug, mode } };
    },
  }),
  adminRoute({
    name: 'courier_calls',
    method: 'GET',
    path: '/courier-sim/:slug/calls',
    tags: ['Outside world'],
    summary: "A simulated courier's last 1,000 calls",
    description:
      'Oldest first: when each call arrived (at), which operation (create, cancel, label, track), the HTTP status answered and how long the ' +
      'answer took (both null while the call is open, and status null when the caller gave up first). Shows order and concurrency from outside.',
    params: Closed({ slug: Slug }),
    output: Closed({
      data: Type.Array(
        Closed({
          at: Type.String({ format: 'date-time' }),
          operation: Type.String(),
          status: Type.Union([Type.Integer(), Type.Null()]),
          duration_ms: Type.Union([Type.Number(), Type.Null()]),
        }),
      ),
    }),
    handler: async (s, { slug }) => {
      const simulator = simulatorOf(s);
      if (!simulator.plays(slug)) throw new AppError('not_found', `the simulator does not play ${slug}`);
      return { data: await simulator.callsOf(slug) };
    },
  }),
  adminRoute({
    name: 'courier_event',
    method: 'POST',
    path: '/shipments/:id/courier-events',
    tags: ['Outside world'],
    summary: 'The courier records a status event for a waybill',
    description:
      'courier_c pushes it to the service at once; courier_a and courier_b report it at their next poll. The courier reports `status` in its own ' +
      "vocabulary, so the service always maps it back to `status`: `code` when it is one of that courier's codes for `status` (courier_a " +
      'OUT_FOR_DELIVERY for in_transit), else its usual one (courier_a IN_TRANSIT, courier_b 30, courier_c on_the_way, ...). `label` becomes ' +
      "the courier's event text.",
    params: Closed({ id: Uuid() }),
    body: Closed({
      status: Type.Unsafe<NormalizedStatus>({ type: 'string', enum: [...SHIPMENT_STATUSES] }),
      code: Type.Optional(Type.Unsafe<string | number>({ type: ['string', 'integer'] })),
      label: Type.Optional(Type.String({ maxLength: 200 })),
    }),
    output: Closed({ data: Closed({ queued: Type.Literal(true) }) }),
    handler: async (s, { id, status, code, label }) => {
      const simulator = simulatorOf(s);
      const { rows } = await s.db.query('SELECT tracking_number FROM shipments WHERE id = $1', [id]);
      if (!rows[0]?.tracking_number) throw new AppError('not_found', 'no shipment with a waybill number has this id');
      if (!(await recordCourierEvent(simulator, rows[0].tracking_number, status, code, label))) {
        throw new AppError('not_found', 'the simulator holds no such waybill');
      }
      return { data: { queued: true as const } };
    },
  }),
  adminRoute({
    name: 'run_job',
    method: 'POST',
    path: '/jobs/:name/run',
    tags: ['Outside world'],
    summary: 'Run one pass of a scheduled job now',
    description: `Jobs: ${Object.keys(JOBS).join(', ')}. With now, the job decides what is due (and schedules what follows) as if the clock read now.`,
    params: Closed({ name: Type.String({ maxLength: 100 }) }),
    body: Closed({ now: Type.Optional(StrictDate('The clock reading the job uses.')) }),
    output: Closed({ data: Closed({ job: Type.String(), processed: Type.Integer() }) }),
    handler: async (s, { name, now }) => {
      const job = JOBS[name];
      if (!job) throw new AppError('not_found', `no job ${name}`, { allowed: Object.keys(JOBS) });
      return { data: { job: name, processed: await job(s, now ? new Date(now) : new Date()) } };
    },
  }),
  adminRoute({
    name: 'list_sink_captures',
    method: 'GET',
    path: '/webhooks/:id/sink',
    tags: ['Outside world'],
    summary: 'What the debug sink stored for a subscription, newest first',
    description:
      'Each capture holds the request headers (lower-cased names) and `body`: the raw request body exactly as the sink received it, ' +
      'as a string of its UTF-8 text, never re-serialized or re-indented. Those are the bytes the delivery was signed over, so ' +
      '`body` verifies as is against the `X-Merx-Signature` and `webhook-signature` headers (the console shows and copies it verbatim). ' +
      'At most the 200 newest captures.',
    params: Closed({ id: Uuid() }),
    output: Closed({
      data: Type.Array(
        Closed({
          id: Uuid(),
          headers: Type.Object({}, { additionalProperties: true }),
          body: Type.String({ description: 'The raw request body, byte for byte as received (UTF-8 text).' }),
          received_at: Type.String({ format: 'date-time' }),
        }),
      ),
    }),
    handler: async (s, { id }) => ({ data: await listSinkCaptures(s.db, id) }),
  }),
];
