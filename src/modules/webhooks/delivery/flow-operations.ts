// EXTENSIONS 9: the webhook flow resource (pause, rate, circuit breaker), on REST, MCP and OpenAPI.
import { Type } from 'typebox';
import { defineOperation } from '../../../platform/operations/operation.ts';
import { Closed } from '../../../platform/contract/schema.ts';
import { Flow, UpdateFlowBody, WebhookIdParams } from '../schema.ts';
import { getFlow, updateFlow } from './flow.ts';

const TAGS = ['Webhooks'];

export const getWebhookFlowOp = defineOperation({
  name: 'get_webhook_flow',
  method: 'GET',
  path: '/api/v1/webhooks/:id/flow',
  scope: 'webhooks:read',
  tags: TAGS,
  summary: "A subscription's flow: pause, rate, circuit and what is held",
  description: "Reads a subscription's flow: paused or not, Retry-After back-pressure, and how many deliveries are held.",
  detail:
    'paused and paused_at; rate_per_second (null: no limit); circuit_breaker, circuit, circuit_opened_at and next_probe_at; ' +
    "retry_after_until (a receiver's Retry-After on 429 or 503, null once passed); held, the deliveries due but held. " +
    'A subscription never changed here has the defaults, which keep the documented delivery behaviour exactly.',
  params: WebhookIdParams,
  output: Closed({ data: Flow }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  // Written by the engine in the background (back-pressure), as the deliveries: from the primary.
  readsFrom: 'primary',
  handler: async (ctx, { id }) => ({ data: await getFlow(ctx.db, ctx.caller.accountId, id) }),
});

export const updateWebhookFlowOp = defineOperation({
  name: 'update_webhook_flow',
  method: 'PATCH',
  path: '/api/v1/webhooks/:id/flow',
  scope: 'webhooks:write',
  tags: TAGS,
  summary: "Pause or resume a subscription's deliveries, set its rate or circuit breaker",
  description: 'Pauses, resumes, or sets the rate or circuit breaker; held ones spend no attempt. Dry run: the flow and the changes.',
  detail:
    'Takes paused, rate_per_second (1..1000, null for no limit) and circuit_breaker. ' +
    'While paused no first, automatic or recovery attempt starts: events still create pending deliveries, no attempt is spent and none ' +
    'is marked dead for the pause; the retry and test endpoints still send. On resume the held deliveries start at once, oldest event ' +
    'first, each as the attempt it was due for. With a rate, no more than that many attempts start within any second, counted across ' +
    'every instance; the others wait in order of their due time. With the circuit breaker, 10 failed attempts in a row open the circuit: ' +
    'nothing starts but one probe (the oldest held delivery) 60 s later, then 120 s after a failed probe, doubling up to 15 minutes; ' +
    'a success of any trigger closes it and the held deliveries drain. Each opening emails the merchant once. ' +
    'Dry run returns the current flow and the changes.',
  params: WebhookIdParams,
  body: UpdateFlowBody,
  output: Closed({ data: Flow }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Flow, changes: Type.Record(Type.String(), Type.Unknown()) }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, { id, ...changes }) => {
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) return { dry_run: true as const, data: await getFlow(ctx.db, accountId, id), changes };
    const { flow } = await ctx.db.tx((tx) => updateFlow(tx, accountId, id, changes));
    // Every instance's worker hears it and takes what may start now (a resume, a rate, a circuit switched off), not at its next pass.
    if (changes.paused !== true) ctx.deliveries.wake();
    return { data: flow };
  },
});
