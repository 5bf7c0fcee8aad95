// The bridge tools (MCP only, bridge scopes): submit a brief, follow it, read its facts.
import { Type } from 'typebox';
import { defineOperation } from '../../platform/operations/operation.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { parseStrictDate } from '../../platform/contract/dates.ts';
import { Closed, Nullable, NullableUuid, StrictDate, Uuid } from '../../platform/contract/schema.ts';
import { BRIEF_KINDS, briefStatusView, getBrief, submitBrief } from './briefs.ts';
import { computeFacts } from './facts.ts';
import { Fact, Status } from './schema.ts';

const TAGS = ['Bridge'];
export const submitBriefOp = defineOperation({
  name: 'submit_brief',
  method: 'POST',
  path: '/bridge/submit_brief',
  scope: 'submit_brief',
  tags: TAGS,
  summary: 'Submit a marketing brief (page, automation, campaign or segment)',
  description: "Hands a brief to the merchant's team (a repeat returns the first); then get_status. Dry run: validates only.",
  detail:
    "Hands a brief to the merchant's team; the bridge stops at a draft and publishing happens in the admin. Idempotent per " +
    '(business_id, operation, step, run): repeating a submission returns the first brief and its current status. business_id defaults to your ' +
    "key's account (another account's id answers NOT_FOUND). Follow it with get_status. Dry run validates without submitting.",
  body: Closed({
    kind: Type.Unsafe<(typeof BRIEF_KINDS)[number]>({ type: 'string', enum: [...BRIEF_KINDS] }),
    title: Type.String({ minLength: 1, maxLength: 500 }),
    brief: Type.String({ minLength: 1, maxLength: 20000 }),
    operation: Type.String({ minLength: 1, maxLength: 200, description: 'Your workflow or operation id.' }),
    step: Type.String({ minLength: 1, maxLength: 200 }),
    run: Type.String({ minLength: 1, maxLength: 200 }),
    business_id: Type.Optional(Uuid({ description: "Defaults to the key's account." })),
  }),
  output: Closed({ brief_id: Uuid(), status: Status }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), kind: Type.String(), business_id: Uuid() }),
  rest: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, { business_id, ...input }) => {
    const accountId = ctx.caller.accountId;
    if (business_id && business_id !== accountId) throw notFound('business');
    if (ctx.dryRun) return { dry_run: true as const, kind: input.kind, business_id: accountId };
    const brief = await ctx.db.tx((tx) => submitBrief(tx, accountId, input));
    return { brief_id: brief.id, status: brief.status };
  },
});

export const getStatusOp = defineOperation({
  name: 'get_status',
  method: 'GET',
  path: '/bridge/get_status',
  scope: 'get_status',
  tags: TAGS,
  summary: 'Where a submitted brief stands',
  description: "A brief's status, its admin_url and, once LIVE, the asset_id for get_facts.",
  detail:
    'Status is RECEIVED, IN_WORK, AWAITING_APPROVAL, APPROVED, LIVE, REJECTED or FAILED (with reason and fail_code). admin_url is where the ' +
    'merchant reviews it; asset_id and public_url are set once it is LIVE (use asset_id with get_facts).',
  query: Closed({ brief_id: Uuid() }),
  output: Closed({
    brief_id: Uuid(),
    kind: Type.String(),
    status: Status,
    reason: Nullable('string'),
    fail_code: Nullable('string'),
    admin_url: Type.String(),
    asset_id: NullableUuid(),
    public_url: Nullable('string'),
  }),
  rest: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, { brief_id }) => briefStatusView(await getBrief(ctx.db, ctx.caller.accountId, brief_id), ctx.config.publicBaseUrl),
});

export const getFactsOp = defineOperation({
  name: 'get_facts',
  method: 'GET',
  path: '/bridge/get_facts',
  scope: 'get_facts',
  tags: TAGS,
  summary: 'Counts for an asset in a time window, with provenance',
  description: 'Facts of an asset between from and to (inclusive): visits, purchases, registrations, attendees, segment size.',
  detail:
    'For a page, segment, automation or campaign (asset_id from get_status, or a page/segment id): page_visits, purchases, registrations, ' +
    'attendees and segment_size between from and to (inclusive), each {value, source, computed_at}; value is null where a fact does not apply.',
  query: Closed({ asset_id: Uuid(), from: StrictDate(), to: StrictDate() }),
  output: Closed({
    asset_id: Uuid(),
    from: Type.String(),
    to: Type.String(),
    facts: Closed({ page_visits: Fact, purchases: Fact, registrations: Fact, attendees: Fact, segment_size: Fact }),
  }),
  rest: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, { asset_id, from, to }) =>
    computeFacts(ctx.db, ctx.caller.accountId, asset_id, parseStrictDate('from', from, 'start'), parseStrictDate('to', to, 'end')),
});

export const bridgeOperations = [submitBriefOp, getStatusOp, getFactsOp];
