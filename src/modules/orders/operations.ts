// The order operations: declared once, exposed on REST, MCP and OpenAPI.
import { defineOperation, type Versioned } from '../../platform/operations/operation.ts';
import { changeOrder, plannedChanges, wouldNotifyCustomer } from './commands.ts';
import { getOrderText, listOrders } from './queries.ts';
import { JsonText, valueOf, storedEtag } from '../../platform/read-path/index.ts';
import { notFound } from '../../platform/contract/errors.ts';
import { orderView } from './view.ts';
import {
  ListOrdersQuery,
  OrderEnvelope,
  type OrderView,
  OrderIdParams,
  OrderList,
  UpdateOrderBody,
  UpdateOrderPreview,
  UpdateOrderResult,
} from './schema.ts';
import { updateOrderEffects } from './approval-descriptions.ts';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

/** EXTENSIONS 3: the order as GET serves it, for ETag and If-Match. */
const orderVersion: Versioned = {
  currentEtag: async (sql, accountId, id, options) => {
    const etag = await storedEtag(sql, orderView, accountId, id, options);
    if (etag === null) throw notFound('order');
    return etag;
  },
};

export const listOrdersOp = defineOperation({
  name: 'list_orders',
  method: 'GET',
  path: '/api/v1/orders',
  scope: 'orders:read',
  tags: ['Orders'],
  summary: 'List orders, newest first',
  description: 'Lists orders, newest first; filters combine (AND).',
  detail:
    "Lists the account's orders newest first, with keyset paging (pass next_cursor as cursor; pages do not shift when new orders arrive). " +
    'Archived orders are hidden unless status=archived. Filters combine with AND: status, payment (payment_status), from/to (created_at, inclusive), ' +
    'since (updated_at >= since: poll with the time of your last poll to fetch changes cheaply), page_id, product_id, courier (slug, or none = no tracking number), ' +
    'shipment_status (of the latest waybill) and q (case-insensitive substring of customer name, phone, email or tracking number).',
  query: ListOrdersQuery,
  output: OrderList,
  fields: { id: 'id' },
  annotations: READ,
  handler: (ctx, input) => listOrders(ctx.db, ctx.caller.accountId, input, ctx.cursors),
});

export const getOrderOp = defineOperation({
  name: 'get_order',
  method: 'GET',
  path: '/api/v1/orders/:id',
  scope: 'orders:read',
  tags: ['Orders'],
  summary: 'Get one order',
  description: 'One order by its id.',
  detail: 'Returns one order by its id (a UUID, not the order number). Orders of other accounts answer not_found.',
  params: OrderIdParams,
  output: OrderEnvelope,
  etag: orderVersion,
  fields: { id: 'id' },
  annotations: READ,
  handler: async (ctx, input) => JsonText.object({ data: await getOrderText(ctx.db, ctx.caller.accountId, input.id) }),
});

export const updateOrderOp = defineOperation({
  name: 'update_order',
  method: 'PATCH',
  path: '/api/v1/orders/:id',
  scope: 'orders:write',
  tags: ['Orders'],
  summary: 'Update an order: status, tracking, courier, internal notes',
  description:
    'Changes status, tracking, courier or admin_notes; shipped emails the customer unless notify_customer is false. Dry run: the order and the changes.',
  detail:
    'Changes any of status, tracking_number, tracking_url, courier and admin_notes; other fields are refused with details.allowed. ' +
    'Setting the current status again is a no-op (status_changed: false, no event). Changing status to shipped notifies the customer per the ' +
    "merchant's settings unless notify_customer is false; email_sent tells whether an email went out. cancelled releases reserved stock; " +
    'returned and refunded restock. Emits order.status_changed and/or order.updated. ' +
    'Dry run (header X-Merx-Dry-Run: 1, or dry_run: true over MCP) writes nothing and returns the current order with the changes it would make.',
  params: OrderIdParams,
  body: UpdateOrderBody,
  output: UpdateOrderResult,
  dryRunOutput: UpdateOrderPreview,
  etag: orderVersion,
  effects: updateOrderEffects,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: async (ctx, input) => {
    const { id, ...body } = input;
    const accountId = ctx.caller.accountId;
    if (ctx.dryRun) {
      const text = await getOrderText(ctx.db, accountId, id);
      const order = valueOf<OrderView>(text);
      const changes = plannedChanges(order, body);
      return JsonText.object({
        dry_run: true,
        data: text,
        changes,
        status_would_change: changes.status !== undefined,
        would_notify_customer: await wouldNotifyCustomer(ctx.db, order, body.status, body.notify_customer),
      });
    }
    const result = await ctx.db.tx((tx) => changeOrder(tx, { notifier: ctx.notifier }, accountId, id, body, ctx.caller.source ?? 'api'));
    return JsonText.object({ data: result.text, status_changed: result.statusChanged, email_sent: result.emailSent });
  },
});

export const orderOperations = [listOrdersOp, getOrderOp, updateOrderOp];
