// The trace of one request (or one MCP tool call), which the operation
// pipeline carries for the agents hook (agents-hook.ts): its id (X-Request-Id,
// MCP `_meta.request_id`), the ids it named and the events it committed.
// The transports fill in the rest of what they report (AnsweredCall) once
// the call is answered; the agents room writes it to the request log.
//
// The events a request committed are collected through the request's async
// context: emit() notes each event id after its transaction commits, so a
// rolled-back event is never listed.
import crypto from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { v7 as uuidv7 } from 'uuid';
import type { Sql } from '../db/db.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The uuid package asks the system for 16 random bytes per id (crypto.getRandomValues, ~5% of a GET's CPU when
// profiled); ids take them from a pool refilled 256 ids at a time, as crypto.randomUUID does.
const entropy = Buffer.alloc(16 * 256);
let entropyUsed = entropy.length;
const clock = { msecs: -Infinity, seq: 0 };

/**
 * The id of a request (X-Request-Id) or an MCP tool call (`_meta.request_id`),
 * and of its log entry: a time-ordered UUID (version 7), so the entries'
 * primary key takes each new id at its right-hand end instead of a random
 * page of the index (bench/RESULTS-request-log.md).
 */
export function newRequestId(): string {
  if (entropyUsed === entropy.length) {
    crypto.randomFillSync(entropy);
    entropyUsed = 0;
  }
  const random = entropy.subarray(entropyUsed, (entropyUsed += 16));
  // RFC 9562's monotonic counter, kept here because the package's own state only runs with its per-call entropy.
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.seq = random.readUInt32BE(6) & 0x7fffffff;
  } else {
    clock.seq = (clock.seq + 1) & 0x7fffffff;
    if (clock.seq === 0) clock.msecs++; // the counter ran out within one millisecond: borrow the next
  }
  return uuidv7({ random, msecs: clock.msecs, seq: clock.seq });
}

/** What one request (or one MCP tool call) did, collected while it runs. */
export class RequestTrace {
  readonly id: string;
  readonly at: Date;
  readonly started = performance.now();
  readonly eventIds: string[] = [];
  readonly resourceIds = new Set<string>();
  constructor(id: string, at = new Date()) {
    this.id = id;
    this.at = at;
  }

  /** Ids the request named or created (path ids, *_id body fields, the answer's data.id): uuids only. */
  addResource(value: unknown): void {
    if (typeof value === 'string' && UUID.test(value)) this.resourceIds.add(value.toLowerCase());
  }
}

const traces = new AsyncLocalStorage<RequestTrace>();

/** Runs `fn` as part of `trace`: the events it commits are listed in the trace. */
export function withTrace<T>(trace: RequestTrace | undefined, fn: () => T): T {
  return trace ? traces.run(trace, fn) : fn();
}

/** Called by emit(): the event counts for the running request once its transaction commits. */
export function noteEvent(tx: Sql, eventId: string): void {
  const trace = traces.getStore();
  if (trace) tx.afterCommit(() => trace.eventIds.push(eventId));
}

/** The key a call was made with, as the log names it. */
export interface LoggedKey {
  accountId: string;
  keyId: string;
  keyPrefix: string;
}

/** What the transport knows of a call once it is answered. */
export interface AnsweredCall {
  transport: 'rest' | 'mcp';
  operation: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  dryRun: boolean;
  idempotencyKey: string | null;
  replayed: boolean;
  durationMs: number;
}

/** The concrete path of a route: its `:name` parameters filled in (path ids only, never a query). */
export function concretePath(routePath: string, params: Record<string, unknown>): string {
  let template = routeTemplates.get(routePath);
  if (!template) routeTemplates.set(routePath, (template = routePath.split(/:([A-Za-z_]+)/)));
  // Split on the parameters, the template alternates text and parameter names: text, name, text, ...
  let path = template[0];
  for (let i = 1; i < template.length; i += 2) path += encodeURIComponent(String(params[template[i]] ?? '')) + template[i + 1];
  return path;
}
const routeTemplates = new Map<string, string[]>();

/** Ids of the resources a call names: uuid-valued path parameters and top-level *_id arguments. */
export function namedResources(trace: RequestTrace, input: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(input)) if (name === 'id' || name.endsWith('_id')) trace.addResource(value);
}
