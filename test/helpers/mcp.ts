// Raw JSON-RPC 2.0 over POST /api/mcp (SPEC MCP): what an MCP client sends,
// without any SDK in between, so tests see the exact HTTP answer.
import assert from 'node:assert/strict';
import { http, type HttpResult } from './harness.ts';

export const MCP_PATH = '/api/mcp';
export const MCP_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'] as const;

let nextId = 1;
/** A fresh request id, unique within the test process. */
export const rpcId = () => nextId++;

export function request(method: string, params?: Record<string, unknown>, id: string | number = rpcId()) {
  return params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
}

export function notification(method: string, params?: Record<string, unknown>) {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

export function toolCall(name: string, args: Record<string, unknown> = {}, id: string | number = rpcId()) {
  return request('tools/call', { name, arguments: args }, id);
}

/** POSTs one message, a batch (array) or a raw string to /api/mcp. */
export async function rpc(base: string, key: string | undefined, payload: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const rawBody = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return http(base, 'POST', MCP_PATH, {
    token: key,
    rawBody,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
}

export interface ToolResult {
  content: Array<{ type: string; text: string }>;
  structuredContent: any;
  isError: boolean;
}

/** tools/call that must come back as a JSON-RPC result (success or domain refusal), never a protocol error. */
export async function callTool(base: string, key: string, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const res = await rpc(base, key, toolCall(name, args));
  assert.equal(res.status, 200, `tools/call ${name}: HTTP ${res.status} ${res.text}`);
  assert.equal(res.body.error, undefined, `tools/call ${name}: JSON-RPC error ${JSON.stringify(res.body.error)}`);
  const result = res.body.result as ToolResult;
  assertToolResultShape(result);
  return result;
}

/** tools/call that must fail as a JSON-RPC protocol error; returns the error object. */
export async function callToolError(base: string, key: string, name: string, args: Record<string, unknown> = {}) {
  const res = await rpc(base, key, toolCall(name, args));
  assert.equal(res.status, 200, `tools/call ${name}: HTTP ${res.status} ${res.text}`);
  assert.equal(res.body.result, undefined, `tools/call ${name}: expected a JSON-RPC error, got result ${JSON.stringify(res.body.result)}`);
  return res.body.error as { code: number; message: string; data?: unknown };
}

/** SPEC MCP: content[0].text is the stringified JSON of structuredContent. */
export function assertToolResultShape(result: ToolResult): void {
  assert.ok(result && typeof result === 'object', 'tool result is an object');
  assert.equal(typeof result.isError, 'boolean');
  assert.ok(Array.isArray(result.content) && result.content.length >= 1, 'content has at least one item');
  assert.equal(result.content[0].type, 'text');
  assert.equal(result.content[0].text, JSON.stringify(result.structuredContent));
}

/** SPEC Errors (MCP): a domain refusal is {isError: true, structuredContent: {error: CODE, reason}}. */
export function assertRefusal(result: ToolResult, code: string): void {
  assert.equal(result.isError, true, `expected refusal ${code}, got ${JSON.stringify(result.structuredContent)}`);
  assert.equal(result.structuredContent.error, code);
  assert.equal(typeof result.structuredContent.reason, 'string');
  assert.ok(result.structuredContent.reason.length > 0, 'reason is not empty');
  assert.deepEqual(Object.keys(result.structuredContent).sort(), ['error', 'reason']);
}
