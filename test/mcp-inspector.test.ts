// The official MCP Inspector (@modelcontextprotocol/inspector) in CLI mode,
// headless, against the service started in this process: the client a
// developer reaches for first must list and call Merx's tools as they are.
//   npx @modelcontextprotocol/inspector --cli <base>/api/mcp --transport http \
//     --method tools/list --header "Authorization: Bearer <key>"
// It is run with this Node (the inspector needs Node >= 22.19) and a
// throw-away HOME, so it never touches the user's ~/.mcp-inspector.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { SCOPES } from '../src/platform/contract/scopes.ts';
import { rpc, request } from './helpers/mcp.ts';

const LAUNCHER = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
);

const SPEC_TOOLS = [
  'list_orders',
  'get_order',
  'update_order',
  'get_shipment',
  'create_shipment',
  'cancel_shipment',
  'get_inventory_stock',
  'list_stock_movements',
  'record_stock_movement',
  'list_products',
  'get_product',
  'create_product',
  'update_product',
  'list_customers',
  'list_segments',
  'create_segment',
  'update_segment',
  'delete_segment',
  'add_segment_members',
  'remove_segment_members',
  'add_customer_note',
  'list_webhooks',
  'list_webhook_deliveries',
  'create_webhook',
  'update_webhook',
  'delete_webhook',
  'test_webhook',
  'submit_brief',
  'get_status',
  'get_facts',
  // EXTENSIONS
  'list_events',
  'rotate_webhook_secret',
  'verify_webhook_signature',
  'get_webhook',
  // EXTENSIONS 6
  'list_delivery_attempts',
  'recover_webhook_deliveries',
  'get_recovery',
  'cancel_recovery',
  'get_webhook_health',
  // EXTENSIONS 9
  'get_webhook_flow',
  'update_webhook_flow',
  // EXTENSIONS 7: listed for every key
  'list_request_logs',
  'get_approval',
  // EXTENSIONS 8
  'create_shipment_batch',
  'get_shipment_batch',
  'list_shipment_batch_items',
  'cancel_shipment_batch',
];
const ALL_SCOPES = [...SCOPES];

let svc: TestService;
let home: string;
before(async () => {
  svc = await startTestService();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-inspector-'));
});
after(async () => {
  await svc.close();
  fs.rmSync(home, { recursive: true, force: true });
});

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the inspector CLI asynchronously (the service answers from this same event loop). */
function inspector(args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [LAUNCHER, '--cli', ...args],
      {
        timeout: 120_000,
        env: {
          ...process.env,
          HOME: home,
          MCP_CATALOG_PATH: path.join(home, 'mcp.json'),
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
        },
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

// --stored-auth-only: on a 401 the inspector would otherwise offer interactive OAuth; a key is all Merx takes.
const connection = (key: string) => [
  `${svc.url}/api/mcp`,
  '--transport',
  'http',
  '--header',
  `Authorization: Bearer ${key}`,
  '--format',
  'json',
  '--stored-auth-only',
];

test("inspector --cli --method tools/list lists exactly SPEC's and EXTENSIONS' tools for an every-scope key, as tools/list answers them", async () => {
  const { key } = await freshTenant(svc.url, { scopes: ALL_SCOPES });
  const run = await inspector([...connection(key), '--method', 'tools/list']);
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stderr}`);
  const out = JSON.parse(run.stdout);
  const tools = out.result.tools as any[];
  assert.deepEqual(tools.map((t) => t.name).sort(), [...SPEC_TOOLS].sort());
  // What the inspector shows is what the server sent.
  const raw = await rpc(svc.url, key, request('tools/list'));
  assert.deepEqual(out.result, raw.body.result);
});

test("inspector --cli lists only the tools a key's scopes allow", async () => {
  const { key } = await freshTenant(svc.url, { preset: 'bridge' });
  const run = await inspector([...connection(key), '--method', 'tools/list']);
  assert.equal(run.code, 0, run.stderr);
  // EXTENSIONS 7: the request log and approvals are listed for every key.
  assert.deepEqual(
    JSON.parse(run.stdout)
      .result.tools.map((t: any) => t.name)
      .sort(),
    ['get_approval', 'get_facts', 'get_status', 'list_request_logs', 'submit_brief'],
  );
});

test('inspector --cli --method tools/call list_orders answers the same JSON as GET /api/v1/orders', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  for (let i = 0; i < 3; i++) await op.checkout(accountId);
  const run = await inspector([...connection(key), '--method', 'tools/call', '--tool-name', 'list_orders', '--tool-args-json', '{"limit":2}']);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout).result;
  assert.equal(result.isError, false);
  const restPage = await http(svc.url, 'GET', '/api/v1/orders?limit=2', { token: key });
  assert.deepEqual(result.structuredContent, restPage.body);
  assert.equal(result.content[0].text, JSON.stringify(restPage.body));
});

test('inspector --cli with a bad key stops at the 401: exit 3 (auth), the REST error body in its message', async () => {
  const run = await inspector([...connection('merx_' + 'x'.repeat(40)), '--method', 'tools/list']);
  assert.equal(run.code, 3, run.stderr);
  assert.equal(run.stdout, '');
  const error = JSON.parse(run.stderr.trim().split('\n').pop()!).error;
  assert.equal(error.code, 'auth_required');
  assert.match(error.message, /unauthorized/);
});

/** Every node of a schema, with its path, for checks the Inspector's report makes too. */
function* nodes(schema: unknown, where: string): Generator<[string, Record<string, unknown>]> {
  if (Array.isArray(schema)) {
    for (const [i, inner] of schema.entries()) yield* nodes(inner, `${where}[${i}]`);
  } else if (schema && typeof schema === 'object') {
    yield [where, schema as Record<string, unknown>];
    for (const [key, inner] of Object.entries(schema))
      if (key !== 'enum' && key !== 'const' && key !== 'default') yield* nodes(inner, `${where}.${key}`);
  }
}

test('inspector --strict reports no schema-portability warning or error, and the list is valid MCP and plain JSON Schema 2020-12', async () => {
  const { key } = await freshTenant(svc.url, { scopes: ALL_SCOPES });
  const run = await inspector([...connection(key), '--method', 'tools/list', '--strict']);
  assert.equal(run.code, 0, `exit ${run.code} (6 = error-severity schema problems)\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /Warning|Error|warnings? across/i, run.stderr);
  const result = JSON.parse(run.stdout).result;
  assert.equal(result.tools.length, SPEC_TOOLS.length);
  // The official SDK's own schema of a tools/list result.
  const parsed = ListToolsResultSchema.safeParse(result);
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues?.slice(0, 3)));
  const ajv = new Ajv2020({ strict: true, strictTypes: false, validateFormats: false });
  for (const tool of result.tools) {
    for (const part of ['inputSchema', 'outputSchema'] as const) {
      const schema = tool[part];
      assert.equal(schema.type, 'object', `${tool.name}.${part} is an object schema (MCP)`);
      assert.doesNotThrow(() => ajv.compile(schema), `${tool.name}.${part} compiles as strict JSON Schema 2020-12`);
      for (const [where, node] of nodes(schema, `${tool.name}.${part}`)) {
        assert.ok(!Array.isArray(node.type), `${where}: one type per node (anyOf for nullable)`);
        for (const keyword of Object.keys(node)) {
          if (where.endsWith('.properties')) continue; // property names, not keywords
          assert.ok(!keyword.startsWith('~') && keyword !== '$id' && keyword !== 'patternProperties', `${where}: no ${keyword}`);
        }
      }
    }
  }
});
