// EXTENSIONS 10, token budgets: what a model reads of Merx, counted with the
// o200k tokenizer (gpt-tokenizer), so a description or schema that grows past
// the budget fails CI. Measurements: bench/RESULTS-token-budgets.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { freshTenant, startTestService } from './helpers/harness.ts';
import { callTool, request, rpc } from './helpers/mcp.ts';
import { SCOPES } from '../src/platform/contract/scopes.ts';

/** EXTENSIONS 10: at most 6,000 (bench/RESULTS-token-budgets.md has where it stands and what is left for new tools). */
const TOOL_LIST_BUDGET = 6_000;
const LIST_ORDERS_BUDGET = 3_000;
const ORDER_FIELDS = 'id,number,status,total,customer.name,tracking_number';

test('token budgets (EXTENSIONS 10)', async (t) => {
  const svc = await startTestService();
  t.after(() => svc.close());
  const { op, accountId, key } = await freshTenant(svc.url, { scopes: [...SCOPES] });

  await t.test('the tool list of a key holding every scope', async () => {
    const res = await rpc(svc.url, key, request('tools/list'));
    const tools = res.body.result.tools as Array<{ name: string; description: string; inputSchema: unknown }>;
    // What a model reads: each tool's name, description and input schema (output schemas are not counted).
    const read = JSON.stringify(tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
    const tokens = countTokens(read);
    t.diagnostic(`tools/list: ${tools.length} tools, ${tokens} tokens`);
    assert.ok(tokens <= TOOL_LIST_BUDGET, `tools/list reads as ${tokens} tokens, over ${TOOL_LIST_BUDGET}`);
  });

  await t.test('list_orders, 50 orders, six fields', async () => {
    for (let i = 0; i < 50; i++) {
      await op.checkout(accountId, {
        customer: { name: `Customer Number ${i}`, email: `c${i}@example.com`, phone: '+359888000111' },
        legacy: { product_name: 'Ceramic mug with a long name', quantity: 2, unit_price: 12.5 },
      });
    }
    const result = await callTool(svc.url, key, 'list_orders', { limit: 50, fields: ORDER_FIELDS });
    assert.equal(result.isError, false, result.content[0].text);
    assert.equal(result.structuredContent.data.length, 50);
    const tokens = countTokens(result.content[0].text);
    t.diagnostic(`list_orders limit 50 fields ${ORDER_FIELDS}: ${tokens} tokens`);
    // For the record (bench/RESULTS-token-budgets.md): the same page without fields.
    const full = await callTool(svc.url, key, 'list_orders', { limit: 50 });
    t.diagnostic(`list_orders limit 50 without fields: ${countTokens(full.content[0].text)} tokens`);
    assert.ok(tokens <= LIST_ORDERS_BUDGET, `content[0].text is ${tokens} tokens, over ${LIST_ORDERS_BUDGET}`);
  });
});
