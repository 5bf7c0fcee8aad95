// GAPS Bridge tools: an asset is a page, a segment, or whatever a LIVE brief
// names as its asset_id. The admin system gives that id (any UUID), so the
// operator's activity and get_facts must know it as the brief account's asset
// of the brief's kind, and no other account's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestService, freshTenant, http, operator, ADMIN_TOKEN, type TestService } from './helpers/harness.ts';
import { assertError } from './helpers/contract.ts';
import { callTool, assertRefusal } from './helpers/mcp.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

const WINDOW = { from: '2026-01-01', to: '2026-12-31T23:59:59Z' };
const IN_WINDOW = '2026-03-10T12:00:00Z';

async function liveBrief(key: string, kind: string, status = 'LIVE') {
  const submitted = await callTool(svc.url, key, 'submit_brief', {
    kind,
    title: `A ${kind}`,
    brief: 'Made by the admin system.',
    operation: 'assets',
    step: 'draft',
    run: crypto.randomUUID(),
  });
  assert.equal(submitted.isError, false, JSON.stringify(submitted.structuredContent));
  const assetId = crypto.randomUUID();
  await operator(svc.url).call('POST', `/briefs/${submitted.structuredContent.brief_id}/status`, {
    status,
    asset_id: assetId,
    public_url: 'https://shop.example/live',
  });
  return assetId;
}

const activity = (assetId: string, body: Record<string, unknown>) =>
  http(svc.url, 'POST', `/admin/api/assets/${assetId}/activity`, { token: ADMIN_TOKEN, body });

for (const kind of ['PAGE', 'AUTOMATION', 'CAMPAIGN', 'SEGMENT']) {
  test(`a LIVE ${kind} brief's asset_id (any UUID from the admin system) takes activity, and get_facts counts it for that account only`, async () => {
    const t = await freshTenant(svc.url, { preset: 'bridge' });
    const assetId = await liveBrief(t.key, kind);
    assert.equal((await activity(assetId, { kind: 'page_visit', count: 5, at: IN_WINDOW })).status, 201);
    assert.equal((await activity(assetId, { kind: 'registration', count: 2, at: IN_WINDOW })).status, 201);
    assert.equal((await activity(assetId, { kind: 'attendance', at: IN_WINDOW })).status, 201);

    const facts = await callTool(svc.url, t.key, 'get_facts', { asset_id: assetId, ...WINDOW });
    assert.equal(facts.isError, false, JSON.stringify(facts.structuredContent));
    const f = facts.structuredContent.facts;
    if (kind === 'SEGMENT') {
      for (const name of ['page_visits', 'purchases', 'registrations', 'attendees'])
        assert.equal(f[name].value, null, `${name} does not apply to a segment`);
      assert.equal(f.segment_size.value, null, 'a segment the admin system holds has no size here');
    } else {
      assert.deepEqual([f.page_visits.value, f.registrations.value, f.attendees.value], [5, 2, 1]);
      assert.equal(f.purchases.value, kind === 'PAGE' ? 0 : null, 'purchases apply to pages only');
      assert.equal(f.segment_size.value, null);
    }
    for (const fact of Object.values<any>(f)) assert.ok(fact.source.length > 0);

    const stranger = await freshTenant(svc.url, { preset: 'bridge' });
    assertRefusal(await callTool(svc.url, stranger.key, 'get_facts', { asset_id: assetId, ...WINDOW }), 'NOT_FOUND');
  });
}

test('an asset_id on a brief that is not LIVE names no asset: activity is 404 and get_facts NOT_FOUND', async () => {
  const t = await freshTenant(svc.url, { preset: 'bridge' });
  const assetId = await liveBrief(t.key, 'CAMPAIGN', 'APPROVED');
  assertError(await activity(assetId, { kind: 'page_visit' }), 404, 'not_found');
  assertRefusal(await callTool(svc.url, t.key, 'get_facts', { asset_id: assetId, ...WINDOW }), 'NOT_FOUND');
});
