// The official MCP SDK client (@modelcontextprotocol/sdk) over Streamable
// HTTP against /api/mcp, with the key as a Bearer header.
//
// Protocol versions: the SDK's Client has no option to choose the version it
// asks for (connect() sends its LATEST_PROTOCOL_VERSION, which Merx does not
// speak, so Merx answers 2025-06-18). To drive each of SPEC's three versions
// through the real SDK, the transport's documented `fetch` option rewrites the
// protocolVersion of the initialize request on its way out; everything after
// that (MCP-Protocol-Version on later requests, result parsing, outputSchema
// validation of structuredContent) is the SDK's own behaviour.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_PATH } from './mcp.ts';

export interface SdkExchange {
  method: string;
  status: number;
  protocolHeader: string | null;
  rpcMethods: string[];
}

export interface SdkConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Every HTTP exchange the SDK made, in order. */
  seen: SdkExchange[];
  /** What the client reported through onerror (should stay empty). */
  errors: Error[];
  close(): Promise<void>;
}

export async function connectSdk(baseUrl: string, key: string, forceVersion?: string): Promise<SdkConnection> {
  const seen: SdkExchange[] = [];
  const errors: Error[] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
    let body = init?.body;
    let rpcMethods: string[] = [];
    if (typeof body === 'string') {
      const parsed = JSON.parse(body);
      const messages = Array.isArray(parsed) ? parsed : [parsed];
      rpcMethods = messages.map((m: any) => m.method ?? '(response)');
      if (forceVersion) {
        for (const m of messages) if (m.method === 'initialize') m.params.protocolVersion = forceVersion;
        body = JSON.stringify(parsed);
      }
    }
    const res = await fetch(input, { ...init, body });
    seen.push({
      method: init?.method ?? 'GET',
      status: res.status,
      protocolHeader: new Headers(init?.headers).get('mcp-protocol-version'),
      rpcMethods,
    });
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(baseUrl + MCP_PATH), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: recordingFetch,
  });
  const client = new Client({ name: 'merx-sdk-tests', version: '0.0.0' }, { capabilities: {} });
  client.onerror = (err) => errors.push(err);
  await client.connect(transport);
  return { client, transport, seen, errors, close: () => client.close() };
}

/** A successful tool result's structuredContent (and content[0].text is its JSON, SPEC MCP). */
export function structuredOf(result: any): any {
  assert.equal(result.isError, false, `tool refused: ${JSON.stringify(result.structuredContent)}`);
  assert.equal(result.content[0].type, 'text');
  assert.equal(result.content[0].text, JSON.stringify(result.structuredContent));
  return result.structuredContent;
}
