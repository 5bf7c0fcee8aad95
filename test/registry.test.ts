// Walks the operation list (DESIGN "one operation, three transports") and
// proves, for every operation, over REST and over MCP:
//   (a) a key lacking the operation's scope is refused (403 scope_missing with
//       error.scope / MCP refusal SCOPE) and nothing is written;
//   (b) an id of another account's resource is 404 (MCP NOT_FOUND), never 403,
//       and neither account changes;
//   (c) a non-UUID id is 400 validation_failed (MCP -32602, GAPS MCP details);
//   (d) a dry run (X-Merx-Dry-Run / dry_run: true) writes nothing, while the
//       same call without it does.
// Fixtures live in helpers/registry-fixtures.ts; an operation without the
// fixtures it needs fails the first test below, it is never skipped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/app.ts';
import type { Operation } from '../src/platform/operations/operation.ts';
import { startTestService, type TestService } from './helpers/harness.ts';
import { rpc, request, toolCall, callTool, assertRefusal, assertToolResultShape } from './helpers/mcp.ts';
import {
  tenant,
  missingFixtures,
  createTargets,
  prepareCall,
  restCall,
  scopesWithout,
  snapshotAccount,
  settle,
  targetArgs,
  isWriteOp,
  type Tenant,
} from './helpers/registry-fixtures.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const onRest = (op: Operation) => op.rest !== false;
const onMcp = (op: Operation) => op.mcp !== false;
const label = (op: Operation) => `${op.name} (${op.method} ${op.path})`;
const NON_UUIDS = ['not-a-uuid', '12345', '0000000000004000800000000000000a', '00000000-0000-4000-8000-00000000000g'];

async function keyFor(t: Tenant, scopes: string[]): Promise<string> {
  return t.op.issueKey(t.accountId, { scopes });
}

async function toolNames(key: string): Promise<string[]> {
  const res = await rpc(svc.url, key, request('tools/list'));
  assert.equal(res.status, 200, res.text);
  return res.body.result.tools.map((tool: any) => tool.name);
}

// ---------------------------------------------------------------- the operation list itself

test('the operation list is not empty and every operation has the fixtures the walk needs', () => {
  assert.ok(operations.length > 0);
  const problems = operations.flatMap(missingFixtures);
  assert.deepEqual(problems, [], `add the missing entries to test/helpers/registry-fixtures.ts:\n${problems.join('\n')}`);
});

test('operation names and REST routes are unique', () => {
  const names = operations.map((op) => op.name);
  assert.deepEqual(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
  );
  const routes = operations.filter(onRest).map((op) => `${op.method} ${op.path}`);
  assert.deepEqual(
    routes.filter((r, i) => routes.indexOf(r) !== i),
    [],
  );
  for (const op of operations) assert.ok(onRest(op) || onMcp(op), `${op.name} is exposed nowhere`);
});

test('every write operation has a dry-run mode (SPEC "What the service does" 5)', () => {
  const missing = operations.filter((op) => isWriteOp(op) && !op.dryRunOutput).map((op) => op.name);
  assert.deepEqual(missing, []);
});

test('tools/list for an every-scope key is exactly the MCP face of the operation list, with dry_run on dry-runnable tools', async () => {
  const t = await tenant(svc);
  const res = await rpc(svc.url, t.key, request('tools/list'));
  const tools = new Map<string, any>(res.body.result.tools.map((tool: any) => [tool.name, tool]));
  assert.deepEqual(
    [...tools.keys()].sort(),
    operations
      .filter(onMcp)
      .map((op) => op.name)
      .sort(),
  );
  for (const op of operations.filter(onMcp)) {
    const schema = tools.get(op.name).inputSchema;
    assert.equal(schema.type, 'object', op.name);
    const expected = [op.params, op.query, op.body].flatMap((part) => Object.keys(part?.properties ?? {}));
    if (op.dryRunOutput) expected.push('dry_run');
    // Issue 41: a write tool also takes what a model cannot set in _meta (the If-Match only where a write is versioned).
    if (isWriteOp(op)) expected.push('approval_id', 'idempotency_key', ...(op.etag ? ['if_match'] : []));
    assert.deepEqual(
      Object.keys(schema.properties ?? {}).sort(),
      [...new Set(expected)].sort(),
      `${op.name}: arguments are the REST parameters flattened`,
    );
    // EXTENSIONS 10 token budgets: the shown schema leaves out additionalProperties: false and the uuid format
    // (compact-schema.ts); the server still refuses an unknown argument, and a non-UUID id (the walk below).
    const unknown = await rpc(svc.url, t.key, toolCall(op.name, { not_an_argument: 1 }));
    assert.equal(unknown.body.error?.code, -32602, `${op.name}: unknown arguments are refused`);
    for (const target of targetArgs(op)) assert.equal(schema.properties[target.name].type, 'string', `${op.name}.${target.name}`);
  }
});

// ---------------------------------------------------------------- the walk

for (const op of operations) {
  // EXTENSIONS 7: the request log and approvals take any valid key (no scope to lack).
  const skip = op.scope === null ? 'any valid key may call it' : false;
  test(`${label(op)}: a key without ${op.scope} is refused and nothing is written`, { skip }, async () => {
    const scope = op.scope!;
    const t = await tenant(svc);
    const key = await keyFor(t, scopesWithout(op));
    const call = await prepareCall(op, await createTargets(op, t), t);
    const before = await snapshotAccount(svc.service, t.accountId);

    if (onRest(op)) {
      const res = await restCall(svc.url, op, key, call);
      assert.equal(res.status, 403, `REST: ${res.status} ${res.text}`);
      assert.equal(res.body.error.code, 'scope_missing');
      assert.equal(res.body.error.scope, op.scope);
      // The dry run is refused the same way.
      if (op.dryRunOutput) {
        const dry = await restCall(svc.url, op, key, call, { 'X-Merx-Dry-Run': '1' });
        assert.equal(dry.status, 403);
        assert.equal(dry.body.error.scope, op.scope);
      }
    }
    if (onMcp(op)) {
      assertRefusal(await callTool(svc.url, key, op.name, call.args), 'SCOPE');
      if (op.dryRunOutput) assertRefusal(await callTool(svc.url, key, op.name, { ...call.args, dry_run: true }), 'SCOPE');
      assert.ok(!(await toolNames(key)).includes(op.name), 'tools/list hides a tool outside the key scopes');
      assert.ok((await toolNames(await keyFor(t, [scope]))).includes(op.name), `tools/list shows ${op.name} to a key with ${scope}`);
    }
    await settle();
    assert.deepEqual(await snapshotAccount(svc.service, t.accountId), before);
  });

  if (targetArgs(op).length > 0) {
    test(`${label(op)}: an id of another account's resource is 404, and the key's own is served`, async () => {
      const a = await tenant(svc);
      const b = await tenant(svc);
      const targets = await createTargets(op, a);
      const call = await prepareCall(op, targets, b);
      const beforeA = await snapshotAccount(svc.service, a.accountId);
      const beforeB = await snapshotAccount(svc.service, b.accountId);

      if (onRest(op)) {
        const res = await restCall(svc.url, op, b.key, call);
        assert.equal(res.status, 404, `REST: ${res.status} ${res.text}`);
        assert.equal(res.body.error.code, 'not_found');
        if (op.dryRunOutput) {
          const dry = await restCall(svc.url, op, b.key, call, { 'X-Merx-Dry-Run': '1' });
          assert.equal(dry.status, 404, `REST dry run: ${dry.status} ${dry.text}`);
        }
      }
      if (onMcp(op)) {
        assertRefusal(await callTool(svc.url, b.key, op.name, call.args), 'NOT_FOUND');
        if (op.dryRunOutput) assertRefusal(await callTool(svc.url, b.key, op.name, { ...call.args, dry_run: true }), 'NOT_FOUND');
      }
      await settle();
      assert.deepEqual(await snapshotAccount(svc.service, a.accountId), beforeA, "the other account's rows are untouched");
      assert.deepEqual(await snapshotAccount(svc.service, b.accountId), beforeB);

      // Control: the owner, with a key holding exactly this scope, is served.
      const ownerKey = await keyFor(a, op.scope ? [op.scope] : ['orders:read']);
      const ownCall = await prepareCall(op, targets, a);
      if (onMcp(op) && (!isWriteOp(op) || op.dryRunOutput)) {
        const result = await callTool(svc.url, ownerKey, op.name, op.dryRunOutput ? { ...ownCall.args, dry_run: true } : ownCall.args);
        assert.equal(result.isError, false, `MCP owner: ${JSON.stringify(result.structuredContent)}`);
      }
      if (onRest(op)) {
        const own = await restCall(svc.url, op, ownerKey, ownCall);
        assert.ok(own.status >= 200 && own.status < 300, `REST owner: ${own.status} ${own.text}`);
      }
    });

    test(`${label(op)}: a non-UUID id is 400 validation_failed (MCP -32602) before any data access`, async () => {
      const t = await tenant(svc);
      const targets = await createTargets(op, t);
      const before = await snapshotAccount(svc.service, t.accountId);
      for (const { name: param } of targetArgs(op)) {
        for (const bad of NON_UUIDS) {
          const call = await prepareCall(op, { ...targets, [param]: bad }, t);
          if (onRest(op)) {
            const res = await restCall(svc.url, op, t.key, call);
            assert.equal(res.status, 400, `REST ${param}=${bad}: ${res.status} ${res.text}`);
            assert.equal(res.body.error.code, 'validation_failed');
          }
          if (onMcp(op)) {
            const res = await rpc(svc.url, t.key, toolCall(op.name, call.args));
            assert.equal(res.body.error?.code, -32602, `MCP ${param}=${bad}: ${res.text}`);
          }
        }
      }
      await settle();
      assert.deepEqual(await snapshotAccount(svc.service, t.accountId), before);
    });
  }

  if (op.dryRunOutput) {
    test(`${label(op)}: a dry run writes nothing; the same call without it does`, async () => {
      const t = await tenant(svc);
      const call = await prepareCall(op, await createTargets(op, t), t);
      const before = await snapshotAccount(svc.service, t.accountId);

      if (onRest(op)) {
        for (const value of ['1', 'true', 'yes']) {
          const res = await restCall(svc.url, op, t.key, call, { 'X-Merx-Dry-Run': value });
          assert.equal(res.status, 200, `REST dry run (${value}): ${res.status} ${res.text}`);
          assert.equal(res.body.dry_run, true);
        }
      }
      if (onMcp(op)) {
        const result = await callTool(svc.url, t.key, op.name, { ...call.args, dry_run: true });
        assertToolResultShape(result);
        assert.equal(result.isError, false, `MCP dry run: ${JSON.stringify(result.structuredContent)}`);
        assert.equal(result.structuredContent.dry_run, true);
      }
      await settle();
      assert.deepEqual(await snapshotAccount(svc.service, t.accountId), before, 'a dry run wrote to the account');

      // Control: the sample really writes, so the comparison above can see a leak.
      const real = onRest(op)
        ? await restCall(svc.url, op, t.key, call)
        : { status: (await callTool(svc.url, t.key, op.name, call.args)).isError ? 400 : 200, text: '' };
      assert.ok(real.status >= 200 && real.status < 300, `real call: ${real.status} ${real.text}`);
      let afterReal = before;
      await settle(async () => {
        afterReal = await snapshotAccount(svc.service, t.accountId);
        return JSON.stringify(afterReal) !== JSON.stringify(before);
      });
      assert.notDeepEqual(afterReal, before, `samples["${op.name}"] changes nothing: give it a body that writes`);
    });
  }
}
