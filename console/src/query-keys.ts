// Every key the console caches a read under, from one place: a page's query
// and the writes that refresh it name the same key, and a list's key begins
// with the key of everything it pages through (`orders(accountId)`), so a
// write that invalidates that one refreshes every page and filter of it.
type Cursor = string | undefined;

export const queryKeys = {
  info: () => ['info'] as const,

  accounts: () => ['accounts'] as const,
  accountsPage: (q: string, cursor: Cursor) => [...queryKeys.accounts(), q, cursor] as const,
  account: (accountId: string) => ['account', accountId] as const,
  keys: (accountId: string) => ['keys', accountId] as const,
  integrations: (accountId: string) => ['integrations', accountId] as const,
  messages: (accountId: string) => ['messages', accountId] as const,
  connectedApps: (accountId: string) => ['connected-apps', accountId] as const,
  requestLogsPage: (accountId: string, filters: string, cursor: Cursor) => ['request-logs', accountId, filters, cursor] as const,
  event: (eventId: string) => ['event', eventId] as const,

  orders: (accountId: string) => ['orders', accountId] as const,
  ordersPage: (accountId: string, filters: object, limit: number | undefined, cursor: Cursor) =>
    [...queryKeys.orders(accountId), filters, limit, cursor] as const,
  order: (orderId: string) => ['order', orderId] as const,
  orderEvents: (orderId: string) => ['order-events', orderId] as const,

  shipments: (accountId: string) => ['shipments', accountId] as const,
  shipmentsPage: (accountId: string, status: string, courier: string, cursor: Cursor) =>
    [...queryKeys.shipments(accountId), status, courier, cursor] as const,
  shipment: (shipmentId: string) => ['shipment', shipmentId] as const,
  batch: (batchId: string) => ['batch', batchId] as const,
  /** The batch's counts are in the key: the items refetch as the batch progresses. The batch id stays second (the page's placeholder checks it). */
  batchItemsPage: (batchId: string, status: string | undefined, cursor: Cursor, counts: { succeeded?: number; failed?: number } | undefined) =>
    ['batch-items', batchId, status, cursor, counts?.succeeded, counts?.failed] as const,

  stock: (accountId: string) => ['stock', accountId] as const,
  movements: (accountId: string) => ['movements', accountId] as const,
  movementsPage: (accountId: string, productId: string | undefined, type: string, cursor: Cursor) =>
    [...queryKeys.movements(accountId), productId, type, cursor] as const,

  webhooks: (accountId: string) => ['webhooks', accountId] as const,
  deliveries: (webhookId: string) => ['deliveries', webhookId] as const,
  deliveriesPage: (webhookId: string, status: string, event: string, cursor: Cursor) =>
    [...queryKeys.deliveries(webhookId), status, event, cursor] as const,
  /** Every delivery's attempts, whichever subscription. */
  attempts: () => ['attempts'] as const,
  deliveryAttempts: (deliveryId: string) => [...queryKeys.attempts(), deliveryId] as const,
  health: (webhookId: string) => ['health', webhookId] as const,
  flow: (webhookId: string) => ['flow', webhookId] as const,
  sink: (webhookId: string) => ['sink', webhookId] as const,
  recoverPreview: (webhookId: string, since: string, until: string, statuses: readonly string[]) =>
    ['recover-preview', webhookId, since, until, statuses.join()] as const,
  recovery: (recoveryId: string | null) => ['recovery', recoveryId] as const,

  approvals: (accountId: string | undefined) => ['approvals', accountId] as const,
  approvalsWithStatus: (accountId: string | undefined, status: string) => [...queryKeys.approvals(accountId), status] as const,
  approvalOrder: (accountId: string, orderId: string | null) => ['approval-order', accountId, orderId] as const,
  approvalCurrent: (approvalId: string) => ['approval-current', approvalId] as const,
};
