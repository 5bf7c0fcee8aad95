// Operator API: the outside world and the scheduled jobs (OPERATOR_API.md "The outside world").
import { Type } from 'typebox';
import { Closed, StrictDate, Uuid } from '../platform/schema.ts';
import { AppError } from '../platform/errors.ts';
import { listSinkCaptures } from '../modules/webhooks/sink.ts';
import { runLowStockCheck } from '../modules/inventory/low-stock.ts';
import { adminRoute, type OperatorServices } from './route.ts';

/** One pass of a scheduled job, as if the clock read `now`. */
const JOBS: Record<string, (s: OperatorServices, now: Date) => Promise<number>> = {
  'webhook-deliveries': (s, now) => s.deliveries.runDue(now),
  'low-stock': (s, now) => runLowStockCheck(s.db, now),
};

export const outsideRoutes = [
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
    description: '',
    params: Closed({ id: Uuid() }),
    output: Closed({
      data: Type.Array(
        Closed({
          id: Uuid(),
          headers: Type.Object({}, { additionalProperties: true }),
          body: Type.String(),
          received_at: Type.String({ format: 'date-time' }),
        }),
      ),
    }),
    handler: async (s, { id }) => ({ data: await listSinkCaptures(s.db, id) }),
  }),
];
