// EXTENSIONS 8: what each export streams. A source is its list route's view,
// filters and order (the rooms' own, shared with the list's pages), the
// single read's document where there is one (the stored views), the schema
// CSV columns come from, and how `starting_after` finds its record.
import { Type, type TObject, type TSchema } from 'typebox';
import type { Sql } from '../../platform/db/db.ts';
import type { Filter, JsonView } from '../../platform/read-path/index.ts';
import type { Scope } from '../../platform/contract/scopes.ts';
import type { FeatureGate } from '../../platform/operations/operation.ts';
import { Closed, StrictDate } from '../../platform/contract/schema.ts';
import { orderView } from '../orders/view.ts';
import { orderListFilter } from '../orders/queries.ts';
import { listOrdersOp } from '../orders/operations.ts';
import { shipmentView } from '../shipments/view.ts';
import { shipmentExportFilter } from '../shipments/queries.ts';
import { CourierSlugSchema, SHIPMENT_STATUSES } from '../shipments/schema.ts';
import { productView } from '../products/view.ts';
import { productListFilter } from '../products/queries.ts';
import { listProductsOp } from '../products/operations.ts';
import { CUSTOMER_ORDER, CUSTOMER_VIEW, customerListFilter } from '../customers/queries.ts';
import { Customer } from '../customers/schema.ts';
import { listCustomersOp } from '../customers/operations.ts';
import { MOVEMENT_VIEW, movementListFilter } from '../inventory/movements.ts';
import { Movement } from '../inventory/schema.ts';
import { listMovementsOp } from '../inventory/operations.ts';

export interface ExportSource {
  resource: 'orders' | 'shipments' | 'products' | 'customers' | 'stock-movements';
  scope: Scope;
  feature?: FeatureGate;
  /** The list's own filters (without its paging parameters). */
  filters: TObject;
  /** The record's schema: the CSV columns, in SPEC's field order. */
  record: TSchema;
  view: JsonView;
  filter(sql: Sql, accountId: string, input: Record<string, any>): Promise<Filter> | Filter;
  /** ORDER BY, the list's. */
  order: string;
  /** What `starting_after` names: the record's id, or (customers) its key. */
  key: { column: string; schema: TSchema; described: string };
  /** The condition "after the record whose key is `$after`" in `order`; `$after` is that record's ordering values, looked up first. */
  after: { lookup: string; condition: (bind: (value: unknown) => string, row: Record<string, unknown>) => string };
}

/** The list's query without its paging (EXTENSIONS 8: limit, offset and cursor give 400 as unknown parameters do). */
function filtersOf(query: TObject | undefined): Record<string, TSchema> {
  const { limit, offset, cursor, ...rest } = (query?.properties ?? {}) as Record<string, TSchema>;
  return rest;
}

/** Newest first on (created_at, id): after a record is strictly older in that order. `lookup` finds the record's (created_at, id). */
function newestFirst(lookup: string, alias: string): ExportSource['after'] {
  return {
    lookup,
    condition: (bind, row) => `(${alias}.created_at, ${alias}.id) < (${bind(row.created_at)}::timestamptz, ${bind(row.id)}::uuid)`,
  };
}

const ID = { column: 'id', schema: Type.String({ format: 'uuid' }), described: 'an id' };
const NEWEST = (a: string) => `${a}.created_at DESC, ${a}.id DESC`;

export const EXPORT_SOURCES: ExportSource[] = [
  {
    resource: 'orders',
    scope: 'orders:read',
    filters: Closed(filtersOf(listOrdersOp.query)),
    record: orderView.schema,
    view: orderView.read,
    filter: (sql, accountId, input) => orderListFilter(sql, accountId, input),
    order: NEWEST('o'),
    key: ID,
    after: newestFirst('SELECT created_at, id FROM orders WHERE account_id = $1 AND id = $2', 'o'),
  },
  {
    resource: 'shipments',
    scope: 'shipments:read',
    filters: Closed({
      status: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...SHIPMENT_STATUSES] })),
      courier: Type.Optional(CourierSlugSchema),
      since: Type.Optional(StrictDate('created_at >= since (inclusive; a date means 00:00:00Z).')),
    }),
    record: shipmentView.schema,
    view: shipmentView.read,
    filter: (_sql, accountId, input) => shipmentExportFilter(accountId, input),
    order: NEWEST('s'),
    key: ID,
    after: newestFirst('SELECT created_at, id FROM shipments WHERE account_id = $1 AND id = $2', 's'),
  },
  {
    resource: 'products',
    scope: 'products:read',
    filters: Closed(filtersOf(listProductsOp.query)),
    record: productView.schema,
    view: productView.read,
    filter: (_sql, accountId, input) => productListFilter(accountId, input),
    order: NEWEST('p'),
    key: ID,
    after: newestFirst('SELECT created_at, id FROM products WHERE account_id = $1 AND id = $2', 'p'),
  },
  {
    resource: 'customers',
    scope: 'customers:read',
    filters: Closed(filtersOf(listCustomersOp.query)),
    record: Customer,
    view: CUSTOMER_VIEW,
    filter: (_sql, accountId, input) => customerListFilter(accountId, input),
    order: CUSTOMER_ORDER,
    key: { column: 'key', schema: Type.String({ minLength: 1, maxLength: 320 }), described: 'a customer key' },
    after: {
      lookup: 'SELECT last_order_at, key FROM customer_aggregates WHERE account_id = $1 AND key = $2',
      // CUSTOMER_ORDER: last_order_at descending, then key ascending.
      condition: (bind, row) => {
        const at = bind(row.last_order_at);
        return `(c.last_order_at < ${at}::timestamptz OR (c.last_order_at = ${at}::timestamptz AND c.key > ${bind(row.key)}))`;
      },
    },
  },
  {
    resource: 'stock-movements',
    scope: 'inventory:read',
    feature: listMovementsOp.feature,
    filters: Closed(filtersOf(listMovementsOp.query)),
    record: Movement,
    view: MOVEMENT_VIEW,
    filter: (_sql, accountId, input) => movementListFilter(accountId, input),
    order: NEWEST('m'),
    key: ID,
    after: newestFirst('SELECT created_at, id FROM stock_movements WHERE account_id = $1 AND id = $2', 'm'),
  },
];
