// POST /api/mcp: a thin JSON-RPC 2.0 layer over the operation list
// (DESIGN: MCP). Stateless Streamable HTTP: JSON responses, no sessions.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requirePlan, requireScope, resourceMetadataChallenge, type AuthenticatedKey } from '../platform/edge/auth.ts';
import { AppError, toAppError } from '../platform/contract/errors.ts';
import { admits, admittingScopes, isWrite, type Operation } from '../platform/operations/operation.ts';
import type { StoredAnswer } from '../platform/operations/idempotency.ts';
import { compileValidator, type Validator } from '../platform/contract/validation.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan, tooDeep } from '../platform/contract/json-depth.ts';
import { runOperation, type OperationRequest } from '../platform/operations/pipeline.ts';
import { JsonText, jsonOf } from '../platform/read-path/index.ts';
import { sendJsonText } from './json-answer.ts';
import type { Services } from '../platform/services.ts';
import { registerPaths } from './http-paths.ts';
import {
  approvalIdOf,
  approvalResult,
  idempotencyKeyOf,
  ifMatchOf,
  refusalOf,
  resultOf,
  successOf,
  versionHeaders,
  withRequestId,
  type ToolResult,
} from './mcp-results.ts';
import { argumentParts, toolArgumentsSchema, toolDescription, toolInputSchema, toolOutputSchema } from './tool-schema.ts';
import { MCP_INSTRUCTIONS } from './mcp-instructions.ts';
import { newRequestId, RequestTrace } from '../platform/operations/request-trace.ts';

export const PROTOCOL_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'];
export const MAX_BATCH = 20;
/** The levels of a batch around a tool's arguments: the batch, the message, its params. */
const ENVELOPE_LEVELS = 3;
const SERVER_INFO = { name: 'merx', version: '1.0.0' };

type Id = string | number | null;
interface RpcResponse {
  jsonrpc: '2.0';
  id: Id;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

const rpcError = (id: Id, code: number, message: string, data?: unknown): RpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

/** A response as JSON; a result PostgreSQL wrote is spliced in, not re-serialised. */
function responseJson(response: RpcResponse): string | JsonText {
  if (!(response.result instanceof JsonText)) return JSON.stringify(response);
  return JsonText.concat([`{"jsonrpc":"2.0","id":${JSON.stringify(response.id)},"result":`, response.result, '}']);
}

class RpcFailure extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

interface Tool {
  op: Operation;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  validate: Validator;
}

function buildTools(operations: Operation[]): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const op of operations.filter((o) => o.mcp !== false)) {
    // Validated in the spelling REST shares (same verdicts, same words); shown in the portable one.
    const validate = compileValidator(toolArgumentsSchema(op, { controls: true }), 'arguments');
    tools.set(op.name, { op, inputSchema: toolInputSchema(op), outputSchema: toolOutputSchema(op), validate });
  }
  return tools;
}

/** EXTENSIONS 7: what the request log records of one tools/call, filled in as it runs. */
interface LoggedCall {
  trace: RequestTrace;
  status: number;
  errorCode: string | null;
  dryRun: boolean;
  idempotencyKey: string | null;
  replayed: boolean;
}

const newCall = (at = new Date()): LoggedCall => ({
  trace: new RequestTrace(newRequestId(), at),
  status: 200,
  errorCode: null,
  dryRun: false,
  idempotencyKey: null,
  replayed: false,
});

function isRequestShape(msg: unknown): msg is { jsonrpc: '2.0'; method: string; id?: Id; params?: unknown } {
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return false;
  const m = msg as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return false;
  if ('id' in m && typeof m.id !== 'string' && typeof m.id !== 'number') return false;
  if ('params' in m && (typeof m.params !== 'object' || m.params === null)) return false;
  return true;
}

/** -32600 for a message that is not a JSON-RPC request, under its id when it has a usable one. */
function invalidRequest(msg: unknown): RpcResponse {
  const id = msg && typeof msg === 'object' && 'id' in msg ? ((msg as { id: Id }).id ?? null) : null;
  return rpcError(typeof id === 'string' || typeof id === 'number' ? id : null, -32600, 'invalid request');
}

export function registerMcp(app: FastifyInstance, services: Services, operations: Operation[]): void {
  const tools = buildTools(operations);

  /** The tool a tools/call names, or undefined (then it is not logged: no operation was named). */
  const toolOf = (params: Record<string, unknown>) => (typeof params.name === 'string' ? tools.get(params.name) : undefined);

  /**
   * EXTENSIONS 7: a tools/call of a known tool by a valid key is logged,
   * whatever its answer; its result carries the entry's id in _meta.request_id.
   */
  async function loggedCall(key: AuthenticatedKey, params: Record<string, unknown>, call: LoggedCall | null) {
    const tool = toolOf(params);
    if (!tool) throw new RpcFailure(-32602, `unknown tool: ${String(params.name)}`);
    const record = call ?? newCall();
    try {
      const result = await callTool(key, tool, params, record);
      return withRequestId(result, record.trace.id);
    } catch (err) {
      if (err instanceof RpcFailure)
        Object.assign(record, err.code === -32603 ? { status: 500, errorCode: 'internal_error' } : { status: 400, errorCode: 'validation_failed' });
      else Object.assign(record, { status: 500, errorCode: 'internal_error' });
      throw err;
    } finally {
      logCall(key, tool.op, record);
    }
  }

  function logCall(key: AuthenticatedKey, op: Operation, call: LoggedCall) {
    const { trace, ...answered } = call;
    services.agents.record(key, trace, {
      transport: 'mcp',
      operation: op.name,
      method: 'POST',
      path: '/api/mcp',
      ...answered,
      durationMs: Math.round(performance.now() - trace.started),
    });
  }

  async function callTool(key: AuthenticatedKey, tool: Tool, params: Record<string, unknown>, call: LoggedCall): Promise<ToolResult | JsonText> {
    const { op } = tool;
    const refusal = (error: AppError) => {
      Object.assign(call, { status: error.status, errorCode: error.code });
      return refusalOf(error);
    };
    const args = params.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new RpcFailure(-32602, 'arguments must be an object');
    try {
      requireScope(key, admittingScopes(op));
      requirePlan(key.plan, services.faults);
    } catch (err) {
      return refusal(toAppError(err));
    }
    // Validation fills in defaults; a write's idempotency fingerprint is of the arguments as sent, so a write validates a copy.
    const input = (isWrite(op) ? structuredClone(args) : args) as Record<string, unknown>;
    try {
      tool.validate(input);
    } catch (err) {
      throw new RpcFailure(-32602, `invalid arguments for ${op.name}: ${(err as Error).message}`);
    }
    // The control arguments (issue 41) steer the call; they are not the operation's input.
    const { dry_run: dryRun, approval_id: _a, idempotency_key: _i, if_match: _m, ...rest } = input;
    call.dryRun = dryRun === true && op.dryRunOutput !== undefined;
    let request: OperationRequest;
    try {
      const ifMatch = ifMatchOf(op, params, input);
      const approvalId = approvalIdOf(op, params, input);
      if (approvalId !== undefined && typeof approvalId !== 'string') {
        throw new AppError(
          'validation_failed',
          'approval_id must be the id of the approval (structuredContent.data.id of the answer that asked for it)',
        );
      }
      const idempotencyKey = idempotencyKeyOf(op, params, input);
      call.idempotencyKey = idempotencyKey ?? null;
      request = {
        transport: 'mcp',
        op,
        caller: key,
        checkedInput: () => rest,
        sent: argumentParts(op, args as Record<string, unknown>),
        dryRun: call.dryRun,
        ifMatch,
        approvalId,
        idempotencyKey,
        trace: call.trace,
        answerOf: (output, extras) => ({
          status: op.successStatus ?? 200,
          headers: { ...extras.headers, ...versionHeaders(op, output) },
          body: jsonOf(output),
          origin: 'mcp',
        }),
      };
    } catch (err) {
      return refusal(toAppError(err));
    }
    try {
      const outcome = await runOperation(services, request);
      if (outcome.kind === 'replay') return replayed(outcome.answer, call);
      if (outcome.kind === 'approval') {
        call.replayed = outcome.answer.replayed;
        return approvalResult(outcome.answer, call.trace.id);
      }
      return successOf(outcome.result, op.etag ? (outcome.etag ?? undefined) : undefined, call.trace.id, outcome.extras.meta);
    } catch (err) {
      const appError = toAppError(err);
      if (appError.code === 'internal_error') {
        services.log.error({ err, tool: op.name }, 'tool failed');
        throw new RpcFailure(-32603, 'internal error');
      }
      return refusal(appError);
    }
  }

  /** A retry of an idempotency key: the first answer, from either transport, as a tool result. */
  function replayed(answer: StoredAnswer, call: LoggedCall): ToolResult {
    call.replayed = true;
    const result = resultOf(answer, call.trace.id);
    if (result.isError)
      Object.assign(call, { status: answer.status, errorCode: (result.structuredContent as { error: string }).error.toLowerCase() });
    return { ...result, _meta: { ...result._meta, idempotent_replayed: true } };
  }

  async function dispatch(key: AuthenticatedKey, msg: { method: string; id?: Id; params?: unknown }, call: LoggedCall | null): Promise<unknown> {
    const params = (msg.params ?? {}) as Record<string, unknown>;
    switch (msg.method) {
      case 'initialize': {
        const requested = params.protocolVersion;
        return {
          protocolVersion: typeof requested === 'string' && PROTOCOL_VERSIONS.includes(requested) ? requested : PROTOCOL_VERSIONS[0],
          capabilities: { tools: { listChanged: false } },
          serverInfo: SERVER_INFO,
          instructions: MCP_INSTRUCTIONS,
        };
      }
      case 'ping':
        return {};
      case 'tools/list':
        return {
          tools: [...tools.values()]
            .filter((t) => admits(t.op, key.scopes))
            .map((t) => ({
              name: t.op.name,
              title: t.op.summary,
              description: toolDescription(t.op),
              inputSchema: t.inputSchema,
              outputSchema: t.outputSchema,
              annotations: { title: t.op.summary, openWorldHint: false, ...t.op.annotations },
            })),
        };
      case 'tools/call':
        return loggedCall(key, params, call);
      default:
        throw new RpcFailure(-32601, `method not found: ${msg.method}`);
    }
  }

  /** One message of a request: null when nothing is owed (a notification). */
  async function answer(key: AuthenticatedKey, msg: unknown, allowed: boolean, retryAfterSec: number, arrivedAt: Date): Promise<RpcResponse | null> {
    if (!isRequestShape(msg)) return invalidRequest(msg);
    const isNotification = !('id' in msg);
    // EXTENSIONS 7: the entry's clock starts when the message arrived, before its rate limit was decided.
    const call = msg.method === 'tools/call' && !isNotification ? newCall(arrivedAt) : null;
    if (!allowed) {
      const tool = call && toolOf((msg.params ?? {}) as Record<string, unknown>);
      if (tool) logCall(key, tool.op, Object.assign(call, { status: 429, errorCode: 'rate_limited' }));
      return isNotification ? null : rpcError(msg.id!, -32000, 'rate limit exceeded', { retry_after_sec: retryAfterSec });
    }
    if (isNotification) return null; // notifications/initialized and friends need no answer
    try {
      return { jsonrpc: '2.0', id: msg.id!, result: await dispatch(key, msg, call) };
    } catch (err) {
      if (err instanceof RpcFailure) return rpcError(msg.id!, err.code, err.message);
      services.log.error({ err }, 'mcp message failed');
      return rpcError(msg.id!, -32603, 'internal error');
    }
  }

  /** The messages of a POST, or the JSON-RPC error that refuses it whole (HTTP 400). */
  function readMessages(request: FastifyRequest): { messages: unknown[]; isBatch: boolean } | { refused: RpcResponse } {
    const versionHeader = request.headers['mcp-protocol-version'];
    if (typeof versionHeader === 'string' && !PROTOCOL_VERSIONS.includes(versionHeader)) {
      return { refused: rpcError(null, -32600, `unsupported MCP-Protocol-Version ${versionHeader}; supported: ${PROTOCOL_VERSIONS.join(', ')}`) };
    }
    const text = String(request.body ?? '');
    // Issue 27: refused on the raw text, before JSON.parse or any walk; the validator holds the arguments themselves to MAX_JSON_DEPTH.
    if (nestsDeeperThan(text, MAX_JSON_DEPTH + ENVELOPE_LEVELS)) {
      const error = tooDeep('the arguments');
      return { refused: rpcError(null, -32602, `invalid params: ${error.message}`, error.details) };
    }
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return { refused: rpcError(null, -32700, 'parse error: the body is not valid JSON') };
    }
    const isBatch = Array.isArray(payload);
    const messages: unknown[] = isBatch ? (payload as unknown[]) : [payload];
    if (isBatch && messages.length === 0) return { refused: rpcError(null, -32600, 'invalid request: empty batch') };
    if (messages.length > MAX_BATCH) return { refused: rpcError(null, -32600, `invalid request: a batch holds at most ${MAX_BATCH} messages`) };
    if (!isBatch && !isRequestShape(payload)) return { refused: invalidRequest(payload) };
    return { messages, isBatch };
  }

  /**
   * SPEC Limits: 120 messages per minute per key; each message of a batch
   * counts, and a POST refused whole counts as one. Every answer to a valid
   * key carries the headers; null when every message is over the limit (429).
   */
  async function countMessages(key: AuthenticatedKey, count: number, reply: FastifyReply) {
    const admitted: Array<{ allowed: boolean; retryAfterSec: number }> = [];
    let remaining = 0;
    for (let i = 0; i < count; i++) {
      const outcome = await services.rateLimits.mcp.consume(key.keyId);
      admitted.push(outcome);
      remaining = outcome.remaining;
    }
    reply.header('X-RateLimit-Limit', services.rateLimits.mcp.points).header('X-RateLimit-Remaining', remaining);
    if (admitted.some((a) => a.allowed)) return admitted;
    const retryAfterSec = Math.max(...admitted.map((a) => a.retryAfterSec));
    void reply
      .code(429)
      .header('Retry-After', retryAfterSec)
      .send({
        ...rpcError(null, -32000, `rate limit exceeded: ${services.rateLimits.mcp.points} messages per minute`, { retry_after_sec: retryAfterSec }),
        retryAfterSec,
      });
    return null;
  }

  const mcpChallenge = resourceMetadataChallenge(services.config.publicBaseUrl);

  async function handle(request: FastifyRequest, reply: FastifyReply) {
    const arrivedAt = new Date(Date.now() - reply.elapsedTime);
    const key = await services.keys.authenticate(request.headers.authorization, request.ip).catch((err: unknown) => {
      // EXTENSIONS 10: the 401 names the protected resource metadata (RFC 9728); SPEC's body is unchanged.
      // A new error: the key cache hands out the same refusal to REST as well.
      if (err instanceof AppError && err.code === 'unauthorized') {
        throw new AppError('unauthorized', err.message, undefined, { headers: { ...err.headers, 'WWW-Authenticate': mcpChallenge } });
      }
      throw err;
    });
    const read = readMessages(request);
    // GAPS check order: 429 before 400.
    const admitted = await countMessages(key, 'refused' in read ? 1 : read.messages.length, reply);
    if (!admitted) return reply;
    if ('refused' in read) return reply.code(400).send(read.refused);
    // In order: a batch may read what an earlier message of it wrote.
    const responses: RpcResponse[] = [];
    for (let i = 0; i < read.messages.length; i++) {
      const response = await answer(key, read.messages[i], admitted[i].allowed, admitted[i].retryAfterSec, arrivedAt);
      if (response) responses.push(response);
    }
    if (responses.length === 0) return reply.code(202).send();
    const answers = responses.map(responseJson);
    const body = read.isBatch ? JsonText.concat(['[', ...answers.flatMap((a, i) => (i ? [',', a] : [a])), ']']) : answers[0];
    reply.code(200);
    if (body instanceof JsonText) return sendJsonText(reply, body, services.answerBuffers);
    return reply.type('application/json; charset=utf-8').send(body);
  }

  app.register(async (scope) => {
    // The body is read as text so that a bad key answers 401 before any parsing, and bad JSON becomes -32700.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.post('/api/mcp', handle);
    registerPaths(scope, [{ path: '/api/mcp', method: 'POST' }]);
  });
}
