// Operator API: the storefront, the payment processor and the merchant's admin (OPERATOR_API.md).
import { Type } from 'typebox';
import { Closed, DateTime, Nullable, StrictDate, Uuid } from '../platform/contract/schema.ts';
import { Order, ORDER_STATUSES, type OrderStatusName } from '../modules/orders/schema.ts';
import { checkout } from '../modules/orders/checkout.ts';
import { changeOrder, changePaymentStatus } from '../modules/orders/commands.ts';
import { accountOfOrder } from '../modules/orders/queries.ts';
import { createPage, importContact, recordAbandonedCart, requireAccount } from '../modules/storefront/service.ts';
import { insertProduct } from '../modules/products/commands.ts';
import { recordInitialStock } from '../modules/inventory/movements.ts';
import { seedAccount } from './seed.ts';
import { adminRoute } from './route.ts';

const AccountId = Closed({ id: Uuid() });
const OrderId = Closed({ id: Uuid() });
const str = (max = 500) => Type.String({ maxLength: max });
const optStr = (max = 500) => Type.Optional(Nullable('string', { maxLength: max }));
const OfficeId = Type.Optional(Type.Unsafe<string | number | null>({ type: ['string', 'integer', 'null'] }));

const ShippingInput = Closed({
  address: optStr(),
  city: optStr(200),
  zip: optStr(20),
  method: optStr(100),
  courier_slug: optStr(100),
  courier_delivery_mode: Type.Optional(Type.Unsafe<'office' | 'home' | null>({ type: ['string', 'null'], enum: ['office', 'home', null] })),
  courier_office_id: OfficeId,
});

export const storefrontRoutes = [
  adminRoute({
    name: 'create_page',
    method: 'POST',
    path: '/accounts/:id/pages',
    tags: ['Storefront'],
    summary: 'Create a landing page selling products',
    description: '',
    params: AccountId,
    body: Closed({ title: Type.String({ minLength: 1, maxLength: 500 }), product_ids: Type.Array(Uuid(), { maxItems: 500 }) }),
    output: Closed({ data: Closed({ id: Uuid(), title: Type.String(), product_ids: Type.Array(Uuid()), public_url: Type.String() }) }),
    successStatus: 201,
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx((tx) => createPage(tx, id, s.config.publicBaseUrl, input)) }),
  }),
  adminRoute({
    name: 'create_catalog_product',
    method: 'POST',
    path: '/accounts/:id/products',
    tags: ['Storefront'],
    summary: 'Create a catalog product as the merchant admin would',
    description: 'Lets tests and demos set up stock and variants that the public API cannot set.',
    params: AccountId,
    body: Closed({
      name: Type.String({ minLength: 1, maxLength: 500 }),
      price: Type.Number({ minimum: 0 }),
      sku: optStr(200),
      delivery_type: Type.Optional(Type.Unsafe<'physical' | 'digital' | 'free'>({ type: 'string', enum: ['physical', 'digital', 'free'] })),
      weight_g: Type.Optional(Nullable('integer', { minimum: 0 })),
      stock_quantity: Type.Optional(Nullable('integer')),
      block_on_zero_stock: Type.Optional(Type.Boolean()),
      low_stock_threshold: Type.Optional(Nullable('integer', { minimum: 0 })),
      variants: Type.Optional(
        Type.Array(
          Closed({
            type: optStr(100),
            name: optStr(200),
            value: optStr(200),
            price_delta: Type.Optional(Nullable('number')),
            stock_quantity: Type.Optional(Nullable('integer')),
          }),
          { maxItems: 100 },
        ),
      ),
    }),
    output: Closed({ data: Type.Object({ id: Uuid(), name: Type.String() }, { additionalProperties: true }) }),
    successStatus: 201,
    handler: async (s, { id, ...input }) => ({
      data: await s.db.tx(async (tx) => {
        await requireAccount(tx, id);
        const product = await insertProduct(tx, id, input);
        await recordInitialStock(tx, id, { id: product.id, stock_quantity: input.stock_quantity, variants: product.variants });
        return product;
      }),
    }),
  }),
  adminRoute({
    name: 'checkout',
    method: 'POST',
    path: '/accounts/:id/orders',
    tags: ['Storefront'],
    summary: 'A customer completes checkout',
    description: 'Creates an order (status new) and emits order.created. Give line_items (resolved from the catalog) or legacy.',
    params: AccountId,
    body: Closed({
      page_id: Type.Optional(Uuid()),
      customer: Closed({ name: optStr(200), email: optStr(320), phone: optStr(50), vat: optStr(50) }),
      shipping: ShippingInput,
      line_items: Type.Optional(
        Type.Array(
          Closed({
            product_id: Uuid(),
            variant_id: Type.Optional(Uuid()),
            qty: Type.Integer({ minimum: 1, maximum: 10000 }),
            unit_price_cents: Type.Optional(Type.Integer({ minimum: 0 })),
            kind: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['main', 'component', 'gift', 'bump', 'extra', 'free_shipping'] })),
            name: Type.Optional(str(500)),
          }),
          { minItems: 1, maxItems: 100 },
        ),
      ),
      legacy: Type.Optional(
        Closed({ product_name: str(500), product_sku: optStr(200), quantity: Type.Integer({ minimum: 1 }), unit_price: Type.Number({ minimum: 0 }) }),
      ),
      payment_method: Type.String({ minLength: 1, maxLength: 50 }),
      payment_status: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
      delivery_price: Type.Optional(Type.Number({ minimum: 0 })),
      discount_amount: Type.Optional(Type.Number({ minimum: 0 })),
      total: Type.Optional(Type.Number({ minimum: 0 })),
      coupon_code: Type.Optional(str(100)),
      notes: Type.Optional(str(5000)),
      funnel_step: Type.Optional(str(50)),
      parent_order_id: Type.Optional(Uuid()),
      created_at: Type.Optional(StrictDate('Backdates the order (tests and imports).')),
    }),
    output: Closed({ data: Order }),
    successStatus: 201,
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx(async (tx) => (await requireAccount(tx, id), checkout(tx, id, input as never))) }),
  }),
  adminRoute({
    name: 'record_payment',
    method: 'POST',
    path: '/orders/:id/payment',
    tags: ['Storefront'],
    summary: 'The payment processor reports a payment status',
    description: 'To paid emits order.paid with source payment.',
    params: OrderId,
    body: Closed({ payment_status: Type.String({ minLength: 1, maxLength: 50 }) }),
    output: Closed({ data: Order }),
    handler: async (s, { id, payment_status }) => ({
      data: await s.db.tx(async (tx) => changePaymentStatus(tx, await accountOfOrder(tx, id), id, payment_status, 'payment')),
    }),
  }),
  adminRoute({
    name: 'merchant_status',
    method: 'POST',
    path: '/orders/:id/status',
    tags: ['Merchant'],
    summary: 'The merchant (or an automation) changes an order status',
    description: 'Same side effects as the public PATCH, with source merchant (default) or automation.',
    params: OrderId,
    body: Closed({
      status: Type.Unsafe<OrderStatusName>({ type: 'string', enum: [...ORDER_STATUSES] }),
      source: Type.Optional(Type.Unsafe<'merchant' | 'automation'>({ type: 'string', enum: ['merchant', 'automation'] })),
    }),
    output: Closed({ data: Order }),
    handler: async (s, { id, status, source }) => {
      // The same service path as the public PATCH.
      const result = await s.db.tx(async (tx) => changeOrder(tx, s, await accountOfOrder(tx, id), id, { status }, source ?? 'merchant'));
      return { data: result.order };
    },
  }),
  adminRoute({
    name: 'merchant_edit_order',
    method: 'PATCH',
    path: '/orders/:id',
    tags: ['Merchant'],
    summary: "The merchant edits an order's shipping address or internal notes",
    description: 'Emits order.updated with the changed columns and source merchant.',
    params: OrderId,
    body: Closed({ shipping: Type.Optional(ShippingInput), admin_notes: optStr(10000) }),
    output: Closed({ data: Order }),
    handler: async (s, { id, shipping, admin_notes }) => {
      const result = await s.db.tx(async (tx) => changeOrder(tx, s, await accountOfOrder(tx, id), id, { shipping, admin_notes }, 'merchant'));
      return { data: result.order };
    },
  }),
  adminRoute({
    name: 'import_contact',
    method: 'POST',
    path: '/accounts/:id/contacts',
    tags: ['Storefront'],
    summary: 'Import a contact (never counted as a customer)',
    description: '',
    params: AccountId,
    body: Closed({ name: Type.Optional(str(200)), email: Type.Optional(str(320)), phone: Type.Optional(str(50)) }),
    output: Closed({ data: Type.Object({ id: Uuid() }, { additionalProperties: true }) }),
    successStatus: 201,
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx((tx) => importContact(tx, id, input)) }),
  }),
  adminRoute({
    name: 'record_abandoned_cart',
    method: 'POST',
    path: '/accounts/:id/abandoned-carts',
    tags: ['Storefront'],
    summary: 'Record an abandoned cart',
    description: '',
    params: AccountId,
    body: Closed({ email: Type.Optional(str(320)), phone: Type.Optional(str(50)) }),
    output: Closed({ data: Type.Object({ id: Uuid() }, { additionalProperties: true }) }),
    successStatus: 201,
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx((tx) => recordAbandonedCart(tx, id, input)) }),
  }),
  adminRoute({
    name: 'seed',
    method: 'POST',
    path: '/accounts/:id/seed',
    tags: ['Storefront'],
    summary: 'Load bulk synthetic products and orders',
    description: 'Set-based inserts: 100k orders load in seconds on PostgreSQL. Deterministic for a given seed. Emits no events.',
    params: AccountId,
    body: Closed({
      orders: Type.Integer({ minimum: 0, maximum: 2_000_000 }),
      products: Type.Integer({ minimum: 0, maximum: 100_000 }),
      customers: Type.Optional(Type.Integer({ minimum: 1 })),
      seed: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    output: Closed({ data: Closed({ orders: Type.Integer(), products: Type.Integer() }) }),
    handler: async (s, { id, ...input }) => ({ data: await s.db.tx((tx) => seedAccount(tx, id, input)) }),
  }),
  adminRoute({
    name: 'list_messages',
    method: 'GET',
    path: '/accounts/:id/messages',
    tags: ['Merchant'],
    summary: 'What the service sent: customer notices and merchant emails',
    description: 'Newest first.',
    params: AccountId,
    output: Closed({
      data: Type.Array(
        Closed({
          id: Uuid(),
          channel: Type.Unsafe<'email' | 'sms'>({ type: 'string', enum: ['email', 'sms'] }),
          to: Type.String(),
          subject: Nullable('string'),
          body: Type.String(),
          kind: Type.String(),
          created_at: DateTime(),
        }),
      ),
    }),
    handler: async (s, { id }) => {
      await requireAccount(s.db, id);
      const { rows } = await s.db.query(
        `SELECT id, channel, recipient AS to, subject, body, kind, created_at FROM outbound_messages
          WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1000`,
        [id],
      );
      return { data: rows as never };
    },
  }),
];
