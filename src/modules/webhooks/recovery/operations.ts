// EXTENSIONS 6, the webhook operations over recoveries: a window of a
// subscription's deliveries sent again in the background, read and cancelled.
// Declared once, exposed on REST, MCP and OpenAPI; the room's operations.ts
// adds them to its list.
import { Type } from 'typebox';
import { defineOperation } from '../../../platform/operations/operation.ts';
import { Closed, DateTime, Uuid } from '../../../platform/contract/schema.ts';
import { AppError } from '../../../platform/contract/errors.ts';
import { parseStrictDate } from '../../../platform/contract/dates.ts';
import { WebhookIdParams } from '../schema.ts';
import { getRecovery, RECOVERABLE_STATUSES, Recovery } from './view.ts';
import { cancelRecovery, checkStartable, countMatching, startRecovery, type RecoveryWindow } from './recoveries.ts';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const TAGS = ['Webhooks'];

const RecoveryParams = Closed({
  id: Uuid({ description: 'Webhook subscription id.' }),
  recovery_id: Uuid({ description: 'Recovery id.' }),
});

const Statuses = Type.Array(Type.Unsafe<(typeof RECOVERABLE_STATUSES)[number]>({ type: 'string', enum: [...RECOVERABLE_STATUSES] }), {
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  description: 'Default failed and dead.',
});

export const RecoverBody = Closed({
  since: DateTime({ description: 'Created at or after.' }),
  until: Type.Optional(DateTime({ description: 'Default now.' })),
  statuses: Type.Optional(Statuses),
});

export const recoverDeliveriesOp = defineOperation({
  name: 'recover_webhook_deliveries',
  method: 'POST',
  path: '/api/v1/webhooks/:id/recover',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Send again every delivery of a window that failed',
  description: 'Resends, in the background, the deliveries created in [since, until] with those statuses; poll get_recovery. Dry run: how many.',
  detail:
    'Starts a recovery: every delivery of this subscription created in [since, until] whose status is one of `statuses` is sent again, ' +
    'oldest first and each once, with its event id and a fresh signature, in the background (it survives a restart and is shared safely by ' +
    'several instances). One attempt at a time, at most 10 starting within any second, not bound by the retry limit; it ends `stopped` ' +
    'after 10 failed attempts in a row (the attempt log says why) or a 410. A recovered success marks the delivery delivered; a failure ' +
    'leaves its status, attempt and next_attempt_at as they were: the automatic schedule is never spent. Answers 202 with Location: the ' +
    'recovery to poll (get_recovery). One running recovery per subscription (409 reason recovery_running); an inactive subscription: 409. ' +
    'Dry run: how many deliveries it would send now.',
  params: WebhookIdParams,
  body: RecoverBody,
  output: Closed({ data: Recovery }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), matched: Type.Integer() }),
  successStatus: 202,
  answerHeaders: { Location: 'Where the recovery is read: /api/v1/webhooks/{id}/recoveries/{recovery_id}.' },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (ctx, { id, since, until, statuses }) => {
    const accountId = ctx.caller.accountId;
    // The schema's date-time admits what an instant cannot be (a leap second, 23:59:60): parsed as every other date bound.
    const window: RecoveryWindow = {
      since: parseStrictDate('since', since, 'start'),
      until: until === undefined ? new Date().toISOString() : parseStrictDate('until', until, 'end'),
      statuses: statuses ?? ['failed', 'dead'],
    };
    if (window.since > window.until) throw new AppError('validation_failed', 'since must not be later than until', { allowed: ['since <= until'] });
    if (ctx.dryRun) {
      await checkStartable(ctx.db, accountId, id, false);
      return { dry_run: true as const, matched: await countMatching(ctx.db, accountId, id, window) };
    }
    const recovery = await ctx.db.tx(async (tx) => {
      const started = await startRecovery(tx, accountId, id, window);
      tx.afterCommit(() => ctx.deliveries.kickRecoveries());
      return started;
    });
    ctx.answer.headers.location = `/api/v1/webhooks/${id}/recoveries/${recovery.id}`;
    return { data: recovery };
  },
});

export const getRecoveryOp = defineOperation({
  name: 'get_recovery',
  method: 'GET',
  path: '/api/v1/webhooks/:id/recoveries/:recovery_id',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: 'Read a recovery and its progress',
  description: "A recovery's state (running, done, cancelled, stopped), window and counts.",
  detail: 'A recovery: its state (running, done, cancelled, stopped), window, statuses and counts (matched, attempted, delivered, failed).',
  params: RecoveryParams,
  output: Closed({ data: Recovery }),
  annotations: READ,
  // Issue 32: never from a read replica. Delivery state is written by the engine in the background, after the
  // request that caused it, with no read-your-writes mark and asynchronous commit: a replica may show it late.
  readsFrom: 'primary',
  handler: async (ctx, { id, recovery_id }) => ({ data: await getRecovery(ctx.db, ctx.caller.accountId, id, recovery_id) }),
});

export const cancelRecoveryOp = defineOperation({
  name: 'cancel_recovery',
  method: 'POST',
  path: '/api/v1/webhooks/:id/recoveries/:recovery_id/cancel',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: 'Cancel a running recovery',
  description: 'Stops a recovery; an attempt in flight finishes. Dry run: the recovery as it is now.',
  detail:
    'Stops the recovery: no further delivery is taken; an attempt in flight finishes and is counted. Cancelling a finished recovery ' +
    'answers it unchanged. Dry run: the recovery as it is now.',
  params: RecoveryParams,
  output: Closed({ data: Recovery }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Recovery }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id, recovery_id }) => {
    if (ctx.dryRun) return { dry_run: true as const, data: await getRecovery(ctx.db, ctx.caller.accountId, id, recovery_id) };
    return { data: await ctx.db.tx((tx) => cancelRecovery(tx, ctx.caller.accountId, id, recovery_id)) };
  },
});
