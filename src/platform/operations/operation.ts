// DESIGN "one operation, three transports": every public operation is declared once
// and the REST route, the MCP tool and the OpenAPI entry are derived from it.
import type { Static, TObject, TSchema } from 'typebox';
import type { Db, Sql } from '../db/db.ts';
import type { Scope } from '../contract/scopes.ts';
import type { Caller } from '../edge/auth.ts';
import type { Services } from '../services.ts';
import type { Config } from '../../config.ts';

import type { JsonText } from '../read-path/json-text.ts';
import { withFieldsParam, type Projectable } from '../contract/fields.ts';
import { noteWriteOperation } from './write-operations.ts';

export type { Caller };

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * Everything a handler may touch: the service's long-lived pieces (Services,
 * which rooms extend) and this call. Services take `db` (or a transaction
 * from it) as their first argument.
 */
export interface OperationContext extends Services {
  /** In a dry run this is a READ ONLY transaction: a write that slips through fails loudly. */
  db: Db;
  caller: Caller;
  dryRun: boolean;
  /** What travels beside the answer's body (declared in `answerHeaders`): REST headers, MCP `_meta` entries. */
  answer: AnswerExtras;
}

/**
 * Beside the body: a REST header (Link, Location) and its MCP twin in
 * `_meta` (next_cursor), since extensions add no field to SPEC's objects.
 */
export interface AnswerExtras {
  headers: Record<string, string>;
  meta: Record<string, unknown>;
}

export const noExtras = (): AnswerExtras => ({ headers: {}, meta: {} });

/** MCP tool annotations (what the tool does to the world). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  /** MCP: true unless the tool only adds (an update that overwrites values is destructive). */
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** MCP: the tool reaches outside Merx (a courier, a subscriber's endpoint). */
  openWorldHint?: boolean;
}

/**
 * EXTENSIONS 3: an operation whose answer's `data` is a versioned resource
 * (order, product, webhook subscription). Its answers carry the ETag of that
 * `data`; a read honours If-None-Match (304), a write If-Match (REST header,
 * MCP `_meta.if_match`), checked against `current` inside the write's own
 * transaction on the locked row, before the handler runs.
 */
export interface Versioned {
  /** The current ETag of the resource `:id` names; `lock` takes its row lock for the transaction. Throws not_found. */
  currentEtag: (sql: Sql, accountId: string, id: string, options: { lock: boolean }) => Promise<string>;
}

export interface OperationSpec<
  P extends TObject | undefined,
  Q extends TObject | undefined,
  B extends TObject | undefined,
  O extends TSchema,
  D extends TSchema | undefined,
> {
  /** The MCP tool name. */
  name: string;
  method: HttpMethod;
  /** Fastify-style path, e.g. /api/v1/orders/:id */
  path: string;
  /** The scope a caller needs; a refusal names it. null: any valid key, whatever its scopes (EXTENSIONS 7: the request log, approvals). */
  scope: Scope | null;
  /**
   * Scopes that admit a caller as well as `scope` does (the events feed: any
   * of the three read scopes). The handler then shows only what the caller's
   * own scopes cover.
   */
  alsoAdmittedBy?: Scope[];
  /** A deployment feature the operation needs; execute() refuses with 503 migration_pending while it is off. */
  feature?: FeatureGate;
  summary: string;
  /**
   * What an AI agent reads in tools/list, and people first: what it does and
   * what its dry run does, in a sentence or two (EXTENSIONS 10 counts every
   * tool's tokens; the scope is added from `scope`).
   */
  description: string;
  /** For people: the full account (refusals, limits, edge cases), after `description` in the OpenAPI document and the tool docs. */
  detail?: string;
  tags: string[];
  params?: P;
  query?: Q;
  body?: B;
  output: O;
  /** Present on write operations that accept dry run: the preview's shape. */
  dryRunOutput?: D;
  successStatus?: 200 | 201 | 202;
  /** Headers the handler may set on a success (ctx.answer.headers), for the OpenAPI document: name -> description. */
  answerHeaders?: Record<string, string>;
  /** A create: where the new resource is read (`:id` = the answer's data.id), sent as the Location header. */
  location?: string;
  /** Exposed over REST (default true) and MCP (default true). */
  rest?: boolean;
  mcp?: boolean;
  /** A REST-only operation that MCP reaches through another tool: that tool's name (docs and OpenAPI say so). */
  mcpVia?: string;
  annotations: ToolAnnotations;
  /** The answer's `data` is a versioned resource: ETag, If-Match (writes), If-None-Match (reads). */
  etag?: Versioned;
  /** EXTENSIONS 10: the read takes `fields` (its query gains the parameter; the pipeline projects `data`). */
  fields?: Projectable;
  /** A binary answer (REST only): the handler returns {body, filename}. */
  produces?: 'application/pdf';
  /** A streamed answer (REST only, EXTENSIONS 8 exports): the media types it may have; the handler returns a StreamAnswer. */
  streams?: string[];
  /**
   * The handler commits on its own, around a call to the outside world (a
   * courier, a subscriber's endpoint) that must not run inside an open
   * transaction or whose failure it must record after a rollback. It is never
   * wrapped in one transaction; an idempotent request's answer is stored
   * after its commit (see IdempotentRun.finish) rather than with it.
   */
  ownTransactions?: true;
  /**
   * EXTENSIONS 7: what performing the operation would do, one English
   * sentence each ("order.status_changed to 2 subscriptions", "email to the
   * customer", "courier_a creates a waybill", "stock of SKU-1: -1"), for an
   * approval. `preview` is the operation's dry-run answer for `input` (null
   * without a dry run); ctx.db reads.
   */
  effects?: (ctx: OperationContext, input: any, preview: any) => Promise<string[]>;
  /**
   * A read served by the primary even when read replicas serve the others
   * (issue 32): the events feed, whose exactly-once argument is about the
   * primary's running transactions (modules/events/feed.ts), and webhook
   * subscriptions, deliveries, attempts, recoveries and health, which the
   * delivery engine writes in the background with no read-your-writes mark.
   */
  readsFrom?: 'primary';
  /** A per-account limit of this operation on top of the key's own (SPEC Limits: webhook test and retry). */
  accountLimit?: { name: string; perMinute: number };
  handler: (
    ctx: OperationContext,
    input: (P extends TObject ? Static<P> : {}) & (Q extends TObject ? Static<Q> : {}) & (B extends TObject ? Static<B> : {}),
    // JsonText: the output already written as JSON by PostgreSQL (issue 12), sent on unparsed.
  ) => Promise<Static<O> | (D extends TSchema ? Static<D> : never) | JsonText>;
}

/** A feature a deployment may not have enabled yet (SPEC Inventory: FEATURE_INVENTORY). */
export interface FeatureGate {
  name: string;
  enabled(config: Config): boolean;
}

export type Operation = OperationSpec<TObject | undefined, TObject | undefined, TObject | undefined, TSchema, TSchema | undefined>;

/** Every scope that admits a caller to the operation; the first is the one a refusal names. */
export function admittingScopes(op: Pick<Operation, 'scope' | 'alsoAdmittedBy'>): Scope[] {
  return op.scope === null ? [] : [op.scope, ...(op.alsoAdmittedBy ?? [])];
}

/** Whether a key with `scopes` may call the operation (an operation without a scope admits any valid key). */
export function admits(op: Pick<Operation, 'scope' | 'alsoAdmittedBy'>, scopes: readonly Scope[]): boolean {
  return op.scope === null || admittingScopes(op).some((scope) => scopes.includes(scope));
}

/** The description people read (OpenAPI, docs): the agent's sentences, then the full account. */
export function fullDescription(op: Pick<Operation, 'description' | 'detail'>): string {
  return op.detail ? `${op.description}\n\n${op.detail}` : op.description;
}

/** Operations that change state: they take dry runs and idempotency keys. */
export function isWrite(op: Operation): boolean {
  return !op.annotations.readOnlyHint;
}

/**
 * Issue 12, caching for pollers: every JSON read answers with an ETag and
 * honours If-None-Match (304, no body). A versioned resource's tag is its
 * version (`etag`); any other read's is the hash of the answer's bytes.
 */
export function answersWithEtag(op: Operation): boolean {
  return op.etag !== undefined || (op.method === 'GET' && !isWrite(op) && !op.produces);
}

/** Identity with inference: lets a module declare an operation with full types. */
export function defineOperation<
  P extends TObject | undefined = undefined,
  Q extends TObject | undefined = undefined,
  B extends TObject | undefined = undefined,
  O extends TSchema = TSchema,
  D extends TSchema | undefined = undefined,
>(spec: OperationSpec<P, Q, B, O, D>): Operation {
  if (!spec.annotations.readOnlyHint) noteWriteOperation(spec.name);
  // EXTENSIONS 10: `fields` is a query parameter like any other, so validation, MCP, OpenAPI and the client see it.
  if (spec.fields) return { ...spec, query: withFieldsParam(spec.query) } as unknown as Operation;
  return spec;
}
