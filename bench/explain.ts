// EXPLAIN (ANALYZE, BUFFERS) of the exact SQL the service sends: the service's
// own query functions run against a Sql that records the statement instead of
// answering it, and the recorded text and parameters are then explained.
import pg from 'pg';
import type { Db, QueryOptions, Sql } from '../src/platform/db/db.ts';
import * as orderQueries from '../src/modules/orders/queries.ts';
import * as customerQueries from '../src/modules/customers/queries.ts';
import type { ListOrdersInput } from '../src/modules/orders/schema.ts';
import type { BenchParams } from './fixtures.ts';

/** The query functions explained: this checkout's, or another one's (bench/explain-filters.ts, a before/after run). */
import type { CursorSeal } from '../src/platform/contract/cursor-seal.ts';
import { EventReactions } from '../src/platform/db/outbox.ts';
import { DocumentCache } from '../src/platform/read-path/document-cache.ts';
import { Keyring } from '../src/platform/edge/secret-box.ts';
export interface ReadFunctions {
  listOrders: typeof orderQueries.listOrders;
  findOrder: typeof orderQueries.findOrder;
  listCustomers: typeof customerQueries.listCustomers;
}

const THIS_CHECKOUT: ReadFunctions = { ...orderQueries, ...customerQueries };

export interface ExplainedQuery {
  name: string;
  request: string;
  sql: string;
  plan: string;
  planningMs: number;
  executionMs: number;
  seqScans: string[];
  rowsRemovedByFilter: number;
  rowsReturned: number;
  /** Pages the whole plan touched (its top node's Buffers: shared hit + read). */
  buffers: number;
  /** A prepared statement, explained on its generic plan as the service runs it (db.ts preparedPool); else planned for its values. */
  genericPlan: boolean;
}

interface Statement {
  text: string;
  params: unknown[];
  prepared: boolean;
}

/**
 * Every statement `use` sends, run on `db` as it is recorded (a read may
 * depend on an earlier one's answer: the pages selling a product; the
 * customer list sends its page and its total side by side).
 */
async function captureAll(db: Db, use: (sql: Sql) => Promise<unknown>): Promise<Statement[]> {
  const seen: Statement[] = [];
  // A type assertion rather than an annotation: Sql is still growing members (afterCommit).
  const recorder = {
    afterCommit: (task: () => void) => task(),
    reactions: new EventReactions(),
    documentCache: new DocumentCache(),
    keyring: new Keyring(),
    query: async (text: string, params: unknown[] = [], options?: QueryOptions) => {
      seen.push({ text, params, prepared: options?.prepared ?? false });
      return db.query(text, params, options);
    },
    exec: async () => {
      throw new Error('exec is not expected while capturing a read query');
    },
  } as Sql;
  await use(recorder);
  return seen;
}

export interface ExplainCase {
  name: string;
  request: string;
  capture: (sql: Sql) => Promise<unknown>;
  /** The last statement answers and keeps the case's name; earlier ones are lookups (the pages selling a product). */
  answerLast?: boolean;
}

const queryString = (input: object) => {
  const query = new URLSearchParams(input as Record<string, string>).toString();
  return query ? `?${query}` : '';
};

export function listCase(
  name: string,
  accountId: string,
  input: ListOrdersInput,
  cursors: CursorSeal,
  read: ReadFunctions = THIS_CHECKOUT,
): ExplainCase {
  return {
    name,
    request: `GET /api/v1/orders${queryString(input)}`,
    capture: (sql) => read.listOrders(sql, accountId, input, cursors),
    answerLast: true,
  };
}

/** One case per list filter the API offers, plus the edge cases worth watching. */
export function explainCases(accountId: string, p: BenchParams, read: ReadFunctions = THIS_CHECKOUT): ExplainCase[] {
  const list = (name: string, input: ListOrdersInput) => listCase(name, accountId, input, p.cursors, read);
  return [
    list('first page (no filter)', {}),
    list('status', { status: p.status as ListOrdersInput['status'] }),
    list('payment', { payment: p.payment }),
    list('from/to (created_at window)', { from: p.from, to: p.to }),
    list('since (updated_at poll)', { since: p.since }),
    list('page_id', { page_id: p.pageId }),
    list('product_id', { product_id: p.productId }),
    list('courier', { courier: p.courier }),
    list('courier=none', { courier: 'none' }),
    list('shipment_status', { shipment_status: p.shipmentStatus as ListOrdersInput['shipment_status'] }),
    list('q (surname fragment)', { q: p.q }),
    list('q (one customer email)', { q: p.qNarrow }),
    list('q (two characters)', { q: 'iv' }),
    list(`deep cursor (page ${p.deepCursorPage})`, { cursor: p.deepCursor }),
    list('status + q', { status: p.status as ListOrdersInput['status'], q: p.q }),
    // Filters that match nothing: an index that only filters (rather than finds) walks every row of the account.
    list('product_id (sold on no order)', { product_id: '00000000-0000-4000-8000-000000000000' }),
    list('shipment_status=returned (few waybills)', { shipment_status: 'returned' }),
    list('q (two characters, no match)', { q: 'zq' }),
    {
      name: 'order by id',
      request: `GET /api/v1/orders/${p.orderIds[0]}`,
      capture: (sql) => read.findOrder(sql, accountId, p.orderIds[0]),
    },
  ];
}

/** The customer list (SPEC Customers): each case sends a page and its `total`, both explained. */
export function customerCases(
  accountId: string,
  p: { q: string; qNarrow: string; deepOffset: number },
  read: ReadFunctions = THIS_CHECKOUT,
): ExplainCase[] {
  const customers = (name: string, input: { q?: string; offset?: number }) => ({
    name,
    request: `GET /api/v1/customers${queryString(input)}`,
    capture: (sql: Sql) => read.listCustomers(sql, accountId, input),
  });
  return [
    customers('customers: first page', {}),
    customers('customers: q (surname fragment)', { q: p.q }),
    customers('customers: q (one email)', { q: p.qNarrow }),
    customers('customers: q (two characters)', { q: 'iv' }),
    customers('customers: q (two characters, no match)', { q: 'zq' }),
    customers('customers: deep offset', { offset: p.deepOffset }),
  ];
}

function sumMatches(plan: string, pattern: RegExp): number {
  let total = 0;
  for (const match of plan.matchAll(pattern)) total += Number(match[1]);
  return total;
}

/** The statement that answers the request (the last one it sends), explained. */
export async function explain(db: Db, c: ExplainCase): Promise<ExplainedQuery> {
  return explainStatement(db, c.name, c.request, (await captureAll(db, c.capture)).at(-1)!);
}

/** One result per statement the case sends, named "<case> [i/n]" when it sends more than one. */
export async function explainEach(db: Db, c: ExplainCase): Promise<ExplainedQuery[]> {
  const statements = await captureAll(db, c.capture);
  const explained: ExplainedQuery[] = [];
  for (const [i, statement] of statements.entries()) {
    const last = i === statements.length - 1;
    const name =
      statements.length === 1 || (c.answerLast && last)
        ? c.name
        : c.answerLast
          ? `${c.name} (lookup ${i + 1} of ${statements.length - 1})`
          : `${c.name} [${i + 1}/${statements.length}]`;
    explained.push(await explainStatement(db, name, c.request, statement));
  }
  return explained;
}

/** Planned for its values, as the service sends a statement it does not prepare. Once to warm the cache, then the measured plan. */
async function explainForValues(db: Db, statement: Statement) {
  const { rowCount } = await db.query(statement.text, statement.params);
  return { rowCount, rows: (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.params)).rows };
}

/** A parameter written as a literal for EXECUTE (an explained statement's values are the bench's own). */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  if (['string', 'number', 'boolean'].includes(typeof value)) return pg.escapeLiteral(String(value));
  throw new Error(`explain: no literal for a parameter of type ${typeof value}`);
}

/**
 * On its generic plan, as the service runs a prepared statement (db.ts
 * preparedPool). EXPLAIN of a statement bound to values plans for those
 * values whatever plan_cache_mode says, so the statement is PREPAREd and its
 * EXECUTE explained, with the values written in.
 */
async function explainGeneric(db: Db, statement: Statement) {
  return db.tx(async (tx) => {
    await tx.exec('SET LOCAL plan_cache_mode = force_generic_plan');
    await tx.exec(`PREPARE merx_explained AS ${statement.text}`);
    const execute = `EXECUTE merx_explained${statement.params.length ? `(${statement.params.map(literal).join(', ')})` : ''}`;
    const { rowCount } = await tx.query(execute);
    const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${execute}`);
    // A prepared statement outlives the transaction.
    await tx.exec('DEALLOCATE merx_explained');
    return { rowCount, rows };
  });
}

async function explainStatement(db: Db, name: string, request: string, statement: Statement): Promise<ExplainedQuery> {
  const { rowCount, rows } = statement.prepared ? await explainGeneric(db, statement) : await explainForValues(db, statement);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  return {
    name,
    request,
    sql: statement.text,
    plan,
    planningMs: Number(/Planning Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN),
    executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN),
    seqScans: [...plan.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1]),
    rowsRemovedByFilter: sumMatches(plan, /Rows Removed by (?:Filter|Index Recheck): (\d+)/g),
    rowsReturned: rowCount,
    buffers: sumMatches(/Buffers: ([^\n]*)/.exec(plan)?.[1] ?? '', /shared (?:hit|read)=(\d+)/g),
    genericPlan: statement.prepared,
  };
}
