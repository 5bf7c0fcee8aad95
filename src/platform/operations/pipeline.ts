// The request steps every transport shares, in one place: a transport reads
// its request into an OperationRequest (REST from its path, query, body and
// headers; MCP from a tool call's arguments and _meta), runs it here, and
// translates the Outcome into its own answer. Admission (key, scope, plan,
// rate limit) stays with the transports: SPEC orders it differently for an
// HTTP request and for a JSON-RPC message.
//
// Here, in order: whether the write waits for a person (EXTENSIONS 7), the
// Idempotency-Key's claim and replay (EXTENSIONS 2), the transport's own
// checks (after the claim, so that a refusal is stored and replayed too),
// execute() (dry run, If-Match, the approval gate, the transaction that
// stores the answer with its effect), and the answer stored under the key
// whatever happened, so that a key is never left leased.
import type { AuthenticatedKey } from '../edge/auth.ts';
import { databaseUnavailable, toAppError, type AppError } from '../contract/errors.ts';
import { etagOfData, storedAnswerEtag } from '../contract/etag.ts';
import { execute, modeOf } from './execute.ts';
import { claimIdempotencyKey, REPLAYED_RESPONSE_HEADERS, requestFingerprint, type RequestParts, type StoredAnswer } from './idempotency.ts';
import { dataOf } from '../read-path/json-text.ts';
import { itemSchemaOf, parseFields, projectAnswer, type Selection } from '../contract/fields.ts';
import { answersWithEtag, isWrite, noExtras, type AnswerExtras, type Operation } from './operation.ts';
import { ApprovalAnswer } from './agents-hook.ts';
import { namedResources, type RequestTrace } from './request-trace.ts';
import type { Services } from '../services.ts';

export type Transport = 'rest' | 'mcp';

/** One call of an operation, as a transport read it from its request. */
export interface OperationRequest {
  transport: Transport;
  op: Operation;
  caller: AuthenticatedKey;
  /** The request as sent, which an Idempotency-Key's fingerprint is of. */
  sent: RequestParts;
  dryRun: boolean;
  /** EXTENSIONS 3: the caller's If-Match (a write of a versioned resource). */
  ifMatch?: string;
  /** EXTENSIONS 7: the approval the write names. */
  approvalId?: string;
  /** EXTENSIONS 2: the write's Idempotency-Key, already checked. */
  idempotencyKey?: string;
  trace: RequestTrace;
  /**
   * The transport's own checks of the request, run after the key is claimed (a refusal is then stored and
   * replayed), and the handler's input they give: path, query and body with defaults and coerced values (REST),
   * or the arguments less dry_run (MCP).
   */
  checkedInput: () => Record<string, unknown>;
  /** The success answer as this transport sends it, as stored under the key for replays. */
  answerOf: (result: unknown, extras: AnswerExtras) => StoredAnswer;
}

export type Outcome =
  /** A retry of an Idempotency-Key: the first answer, as stored. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** EXTENSIONS 7: the write was not performed; it waits for a person. */
  | { kind: 'approval'; answer: ApprovalAnswer }
  /**
   * The operation ran. `etag`: the version a write's If-Match checks, or a
   * read's tag made of stored views' tags (null: the transport tags the bytes
   * it sends, or nothing). `stored`: the answer stored under the request's
   * key, to be sent as it is.
   */
  | { kind: 'done'; result: unknown; etag: string | null; extras: AnswerExtras; stored?: StoredAnswer; projected?: true };

/** A refusal as stored under a key: its status, the headers a replay repeats, its body. */
function refusalAnswer(error: AppError, origin: Transport): StoredAnswer {
  const headers = Object.fromEntries(
    Object.entries(error.headers)
      .map(([name, value]) => [name.toLowerCase(), value])
      .filter(([name]) => REPLAYED_RESPONSE_HEADERS.includes(name)),
  );
  return { status: error.status, headers, body: JSON.stringify(error.toBody()), origin };
}

/** EXTENSIONS 7: the 202 of a write that waits for a person, as stored under a key that named an approval. */
function approvalAnswerOf(answer: ApprovalAnswer, origin: Transport): StoredAnswer {
  return { status: 202, headers: { location: answer.location }, body: JSON.stringify(answer.body), origin };
}

/** EXTENSIONS 10: the fields a read asks for, taken out of its input and read before the handler runs (an unknown name costs no query). */
function fieldsSelection(op: Operation, input: Record<string, unknown>): Selection | null {
  if (!op.fields || typeof input.fields !== 'string') return null;
  const selection = parseFields(input.fields, itemSchemaOf(op.output), op.fields);
  delete input.fields;
  return selection;
}

export async function runOperation(services: Services, request: OperationRequest): Promise<Outcome> {
  const { op, caller, trace, dryRun, transport } = request;
  // Issue 38: while no primary takes writes, a write is refused at once (reads may still be served by a replica).
  if (isWrite(op) && services.db.health.isDown) throw databaseUnavailable();
  // Whether the write waits for a person: decided as execute() decides it (a dry run or a named approval does not).
  const waits = modeOf(services, op, caller, { dryRun, approvalId: request.approvalId }) === 'ask approval';
  // A dry run neither claims nor stores; a write that asks for approval performs nothing, and its key finds the same approval again.
  const claim =
    request.idempotencyKey !== undefined && isWrite(op) && !dryRun && !waits
      ? await claimIdempotencyKey(services.db, caller.accountId, request.idempotencyKey, requestFingerprint(op, request.sent))
      : null;
  if (claim && 'replay' in claim) return { kind: 'replay', answer: claim.replay };
  const run = claim?.run;
  try {
    const input = request.checkedInput();
    const selection = fieldsSelection(op, input);
    namedResources(trace, input);
    const extras = noExtras();
    let stored: StoredAnswer | undefined;
    // Issue 27: an idempotent write's answer is written with its effect, in its transaction.
    const idempotent = run && { run, answerOf: (result: unknown) => (stored = request.answerOf(result, extras)) };
    const result = await execute(services, op, caller, input, {
      dryRun,
      ifMatch: request.ifMatch,
      idempotent,
      approvalId: request.approvalId,
      idempotencyKey: waits ? request.idempotencyKey : undefined,
      trace,
      answer: extras,
    });
    if (result instanceof ApprovalAnswer) {
      await run?.finish(approvalAnswerOf(result, transport));
      return { kind: 'approval', answer: result };
    }
    // A create names what it made (an update's target is named by its input already).
    if (op.successStatus === 201 && !dryRun) trace.addResource((dataOf(result) as { id?: unknown } | null)?.id);
    // An operation that commits on its own (ownTransactions) has its answer stored now, once.
    if (run && !stored) await run.finish((stored = request.answerOf(result, extras)));
    // EXTENSIONS 10: a projected answer carries no ETag (it is not the resource's version).
    if (selection) return { kind: 'done', result: projectAnswer(result, selection), etag: null, extras, projected: true };
    const etag = op.etag ? etagOfData(result) : answersWithEtag(op) ? storedAnswerEtag(result) : null;
    return { kind: 'done', result, etag, extras, stored };
  } catch (err) {
    await run?.finish(refusalAnswer(toAppError(err), transport));
    throw err;
  } finally {
    // Whatever happened, the key is not left leased (a no-op once its answer is stored).
    await run?.abandon();
  }
}
