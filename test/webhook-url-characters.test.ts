// Issue 27: a webhook URL with CR/LF was stored as given and called as
// something else (the URL parser drops tabs and line breaks inside and
// strips whitespace at the ends). A URL holding whitespace or a control
// character anywhere is refused with 400 validation_failed and
// details.reason "characters", on create and update, REST and MCP, and
// nothing is stored.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { callTool, assertRefusal } from './helpers/mcp.ts';
import { createWebhook, listWebhooks } from './helpers/webhooks.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ WORKERS: '0' });
});
after(async () => {
  await svc?.close();
});

const GOOD = 'https://93.184.216.34/hook';
const WITH_CHARACTERS: Record<string, string> = {
  'CR LF inside (a header after it)': 'https://93.184.216.34/hook\r\nX-Injected: 1',
  'LF inside the path': 'https://93.184.216.34/ho\nok',
  'CR in the host': 'https://93.184.\r216.34/hook',
  'tab inside': 'https://93.184.216.34/ho\tok',
  'leading space': ' https://93.184.216.34/hook',
  'trailing LF': 'https://93.184.216.34/hook\n',
  'space in the path': 'https://93.184.216.34/a b',
  'space in the query': 'https://93.184.216.34/hook?a=1 2',
  DEL: 'https://93.184.216.34/hook\u007f',
  'C1 NEL': 'https://93.184.216.34/hook\u0085',
  escape: 'https://93.184.216.34/\u001bhook',
  'no-break space': 'https://93.184.216.34/hook\u00a0',
  'line separator': 'https://93.184.216.34/hook\u2028',
  'zero-width space in the host': 'https://exa\u200bmple.com/hook',
  'right-to-left override': 'https://93.184.216.34/\u202ekooh',
};

test('create: a URL with whitespace or a control character anywhere is 400 validation_failed, reason "characters"; nothing is stored', async () => {
  const { key } = await freshTenant(svc.url);
  for (const [name, url] of Object.entries(WITH_CHARACTERS)) {
    const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url, events: ['order.created'] } });
    const error = assertError(res, 400, 'validation_failed', name);
    assert.equal(error.details.reason, 'characters', name);
    assert.match(error.message, /control characters/, name);
    const dry = await http(svc.url, 'POST', '/api/v1/webhooks', {
      token: key,
      body: { url, events: ['order.created'] },
      headers: { 'x-merx-dry-run': '1' },
    });
    assert.equal(assertError(dry, 400, 'validation_failed', `${name} (dry run)`).details.reason, 'characters');
  }
  assert.deepEqual((await listWebhooks(svc.url, key)).data ?? [], []);
  // The same URL percent-encoded is an ordinary URL.
  const encoded = await createWebhook(svc.url, key, { url: 'https://93.184.216.34/a%20b?x=%0D%0A', events: ['order.created'] });
  assert.equal(encoded.data.url, 'https://93.184.216.34/a%20b?x=%0D%0A');
});

test('update: the same refusal, and the stored URL is unchanged', async () => {
  const { key } = await freshTenant(svc.url);
  const { data: hook } = await createWebhook(svc.url, key, { url: GOOD, events: ['order.created'] });
  for (const [name, url] of Object.entries(WITH_CHARACTERS)) {
    const res = await http(svc.url, 'PATCH', `/api/v1/webhooks/${hook.id}`, { token: key, body: { url } });
    assert.equal(assertError(res, 400, 'validation_failed', name).details.reason, 'characters', name);
  }
  const now = await http(svc.url, 'GET', `/api/v1/webhooks/${hook.id}`, { token: key });
  assert.equal(now.body.data.url, GOOD);
});

test('MCP create_webhook and update_webhook refuse it as VALIDATION_FAILED naming the characters', async () => {
  const { key } = await freshTenant(svc.url);
  const url = WITH_CHARACTERS['CR LF inside (a header after it)'];
  const created = await callTool(svc.url, key, 'create_webhook', { url, events: ['order.created'] });
  assertRefusal(created, 'VALIDATION_FAILED');
  assert.match(created.structuredContent.reason, /control characters/);
  const { data: hook } = await createWebhook(svc.url, key, { url: GOOD, events: ['order.created'] });
  const updated = await callTool(svc.url, key, 'update_webhook', { id: hook.id, url });
  assertRefusal(updated, 'VALIDATION_FAILED');
  const now = await http(svc.url, 'GET', `/api/v1/webhooks/${hook.id}`, { token: key });
  assert.equal(now.body.data.url, GOOD);
});
