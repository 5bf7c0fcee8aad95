// Customers, segments, members and notes: declared once, exposed on REST, MCP and OpenAPI.
import crypto from 'node:crypto';
import { Type } from 'typebox';
import { defineOperation } from '../../platform/operations/operation.ts';
import { AppError } from '../../platform/contract/errors.ts';
import { JsonText } from '../../platform/read-path/index.ts';
import { Closed, Uuid } from '../../platform/contract/schema.ts';
import { listCustomers } from './queries.ts';
import { Customer, Members, Note, Segment, SegmentFilters, SegmentIdParams, SegmentName } from './schema.ts';
import {
  addMembers,
  checkFilters,
  countSegment,
  createSegment,
  deleteSegment,
  existingMembers,
  getSegmentText,
  listSegments,
  memberKeys,
  removeMembers,
  requireMembershipSegment,
  updateSegment,
} from './segments.ts';
import { addNote } from './notes.ts';
import { keyFromReference } from './key.ts';

const TAGS = ['Customers'];
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

export const listCustomersOp = defineOperation({
  name: 'list_customers',
  method: 'GET',
  path: '/api/v1/customers',
  scope: 'customers:read',
  tags: TAGS,
  summary: 'List customers, most recent order first',
  description: 'Customers computed from orders (key: lower-cased email, else phone); q searches name, email and phone.',
  detail:
    'Customers are computed from orders: key = lower-cased email, else phone. Cancelled, archived and refunded orders and imported contacts do not ' +
    'count. Offset paging with total; q matches name, email or phone (case-insensitive substring).',
  query: Closed({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    q: Type.Optional(Type.String({ maxLength: 100 })),
  }),
  output: Closed({ data: Type.Array(Customer), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), has_more: Type.Boolean() }),
  fields: { id: 'key' },
  annotations: READ,
  handler: (ctx, input) => listCustomers(ctx.db, ctx.caller.accountId, input),
});

export const listSegmentsOp = defineOperation({
  name: 'list_segments',
  method: 'GET',
  path: '/api/v1/segments',
  scope: 'customers:read',
  tags: TAGS,
  summary: 'List all saved segments with their customer counts',
  description: 'Customer segments: membership (a list of customers) or computed (filters over orders).',
  detail: 'kind membership: an explicit list of customers; kind computed: the customers matching its filters now.',
  output: Closed({ data: Type.Array(Segment) }),
  annotations: READ,
  handler: async (ctx) => JsonText.object({ data: await listSegments(ctx.db, ctx.caller.accountId) }),
});

const Preview = Closed({
  name: Type.String(),
  filters: Type.Record(Type.String(), Type.Unknown()),
  kind: Type.String(),
  customer_count: Type.Union([Type.Integer(), Type.Null()]),
});

export const createSegmentOp = defineOperation({
  name: 'create_segment',
  method: 'POST',
  path: '/api/v1/segments',
  scope: 'customers:write',
  tags: TAGS,
  summary: 'Create a segment',
  description:
    'Creates a customer segment: computed from orders with filters, a membership list without. Dry run: the kind and, if computed, its count.',
  detail:
    'Without filters the segment is a membership segment (its filters become {inSegment: <own id>}); with filters it is computed from orders. ' +
    'Filter keys: minTotal, maxTotal, minOrders, maxOrders, lastOrderBeforeDaysAgo, lastOrderAfterDate, lastOrderBeforeDate, productId, pageId, ' +
    'inSegment, hasEmail, hasPhone, hasAbandonedCart; unknown keys give 400. Dry run previews the kind and, for a computed segment, its count.',
  body: Closed({ name: SegmentName, filters: Type.Optional(SegmentFilters) }),
  output: Closed({ data: Segment }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Preview }),
  successStatus: 201,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: async (ctx, input) => {
    const accountId = ctx.caller.accountId;
    const filters = input.filters ?? {};
    await checkFilters(ctx.db, accountId, filters);
    if (ctx.dryRun) {
      const computed = Object.keys(filters).length > 0;
      return {
        dry_run: true as const,
        data: {
          name: input.name,
          filters,
          kind: computed ? 'computed' : 'membership',
          customer_count: computed ? await countSegment(ctx.db, accountId, { id: crypto.randomUUID(), filters }) : 0,
        },
      };
    }
    return JsonText.object({ data: await ctx.db.tx((tx) => createSegment(tx, accountId, input)) });
  },
});

export const updateSegmentOp = defineOperation({
  name: 'update_segment',
  method: 'PATCH',
  path: '/api/v1/segments/:id',
  scope: 'customers:write',
  tags: TAGS,
  summary: 'Rename a segment or change its filters',
  description: 'Renames a segment or changes its filters ({} makes it a membership list). Dry run: the current segment and the changes.',
  detail: 'filters {} turns it into a membership segment. Dry run returns the current segment and the changes.',
  params: SegmentIdParams,
  body: Closed({ name: Type.Optional(SegmentName), filters: Type.Optional(SegmentFilters) }),
  output: Closed({ data: Segment }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Segment, changes: Type.Record(Type.String(), Type.Unknown()) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id, ...input }) => {
    const accountId = ctx.caller.accountId;
    if (input.filters) await checkFilters(ctx.db, accountId, input.filters);
    if (ctx.dryRun) return JsonText.object({ dry_run: true, data: await getSegmentText(ctx.db, accountId, id), changes: input });
    return JsonText.object({ data: await ctx.db.tx((tx) => updateSegment(tx, accountId, id, input)) });
  },
});

export const deleteSegmentOp = defineOperation({
  name: 'delete_segment',
  method: 'DELETE',
  path: '/api/v1/segments/:id',
  scope: 'customers:write',
  tags: TAGS,
  summary: 'Delete a segment and its memberships',
  description: 'Deletes a segment. Dry run: the segment and how many memberships would go.',
  detail: 'Dry run returns the segment and how many memberships would go.',
  params: SegmentIdParams,
  output: Closed({ data: Closed({ id: Uuid(), deleted: Type.Literal(true), members_removed: Type.Integer() }) }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Segment, members_removed: Type.Integer() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id }) => {
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      const segment = await getSegmentText(ctx.db, accountId, id);
      const { rows } = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM segment_members WHERE segment_id = $1', [id]);
      return JsonText.object({ dry_run: true, data: segment, members_removed: rows[0].n });
    }
    return { data: await ctx.db.tx((tx) => deleteSegment(tx, accountId, id)) };
  },
});

export const addMembersOp = defineOperation({
  name: 'add_segment_members',
  method: 'POST',
  path: '/api/v1/segments/:id/members',
  scope: 'customers:write',
  tags: TAGS,
  summary: 'Add customers to a membership segment',
  description: 'Adds customers to a membership segment; members already in are skipped. Dry run: the normalized keys.',
  detail:
    'Each customer is {email} or {phone} (email wins, lower-cased); no prior order is needed. Existing members count as skipped. ' +
    'A computed segment gives 409 (details.kind filter_segment). Dry run previews the normalized keys.',
  params: SegmentIdParams,
  body: Members,
  output: Closed({ data: Closed({ added: Type.Integer(), skipped: Type.Integer(), total: Type.Integer() }) }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), keys: Type.Array(Type.String()), would_add: Type.Integer(), would_skip: Type.Integer() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  handler: async (ctx, { id, customers }) => {
    const accountId = ctx.caller.accountId;
    const keys = await memberKeys(ctx.db, customers);
    if (ctx.dryRun) {
      await requireMembershipSegment(ctx.db, accountId, id);
      const existing = await existingMembers(ctx.db, id, keys);
      return { dry_run: true as const, keys, would_add: keys.length - existing.size, would_skip: existing.size + (customers.length - keys.length) };
    }
    const result = await ctx.db.tx((tx) => addMembers(tx, accountId, id, keys));
    return { data: { ...result, skipped: result.skipped + (customers.length - keys.length) } };
  },
});

export const removeMembersOp = defineOperation({
  name: 'remove_segment_members',
  method: 'DELETE',
  path: '/api/v1/segments/:id/members',
  scope: 'customers:write',
  tags: TAGS,
  summary: 'Remove customers from a membership segment',
  description: 'Removes customers from a membership segment. Dry run: how many would go.',
  detail: 'Same body as adding; unknown keys are ignored. Dry run previews how many would go.',
  params: SegmentIdParams,
  body: Members,
  output: Closed({ data: Closed({ removed: Type.Integer() }) }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), keys: Type.Array(Type.String()), would_remove: Type.Integer() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, { id, customers }) => {
    const accountId = ctx.caller.accountId;
    const keys = await memberKeys(ctx.db, customers);
    if (ctx.dryRun) {
      await requireMembershipSegment(ctx.db, accountId, id);
      return { dry_run: true as const, keys, would_remove: (await existingMembers(ctx.db, id, keys)).size };
    }
    return { data: await ctx.db.tx((tx) => removeMembers(tx, accountId, id, keys)) };
  },
});

export const addNoteOp = defineOperation({
  name: 'add_customer_note',
  method: 'POST',
  path: '/api/v1/customers/:key/notes',
  scope: 'customers:write',
  tags: TAGS,
  summary: 'Add a note to a customer',
  description: 'Adds a note to a customer (key: lower-cased email, else phone). Dry run: validates, writes nothing.',
  detail:
    'key is the customer key (lower-cased email, else phone; URL-encoded; up to 200 characters); no prior order is needed. text up to 2000 characters.',
  params: Closed({ key: Type.String({ minLength: 1, maxLength: 200, description: 'Customer key, URL-encoded.' }) }),
  body: Closed({ text: Type.String({ minLength: 1, maxLength: 2000 }) }),
  output: Closed({ data: Note }),
  dryRunOutput: Closed({ dry_run: Type.Literal(true), data: Closed({ customer_key: Type.String(), text: Type.String() }) }),
  successStatus: 201,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: async (ctx, { key, text }) => {
    const customerKey = await keyFromReference(ctx.db, key);
    if (!customerKey) throw new AppError('validation_failed', 'key must not be blank');
    if (ctx.dryRun) return { dry_run: true as const, data: { customer_key: customerKey, text } };
    // In a transaction like every write, so an idempotency key's fence covers it too.
    return JsonText.object({ data: await ctx.db.tx((tx) => addNote(tx, ctx.caller.accountId, customerKey, text)) });
  },
});

export const customerOperations = [
  listCustomersOp,
  listSegmentsOp,
  createSegmentOp,
  updateSegmentOp,
  deleteSegmentOp,
  addMembersOp,
  removeMembersOp,
  addNoteOp,
];
