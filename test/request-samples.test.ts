// Issue 41: every request sample of the public reference works as written once
// its placeholders are filled: sent to a running service, the answer is a
// success (none of them is meant to show a refusal) and validates against the
// document; and the samples read as requests a person would send.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { assertResponseMatches, validateResponse } from './helpers/openapi-validator.ts';
import { parseCurl, sendEverySample, type SentSample } from './helpers/sample-requests.ts';

let svc: TestService;
let sent: SentSample[];
before(async () => {
  // The failing subscription's endpoint is a closed port on this machine.
  svc = await startTestService({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  sent = await sendEverySample(svc);
});
after(async () => {
  await svc?.close();
});

test('every request sample, sent with its placeholders filled, succeeds and its answer validates against the document', async () => {
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  const documented = Object.values(doc.paths as Record<string, object>).reduce((n: number, item) => n + Object.keys(item).length, 0);
  assert.equal(sent.length, documented, 'every operation of the document');
  const refused = sent
    .filter(({ res }) => res.status < 200 || res.status >= 300)
    .map(
      ({ operationId, method, sent: request, res }) =>
        `${operationId}: ${method.toUpperCase()} ${request.url} ${request.body ?? ''} -> ${res.status} ${res.text.slice(0, 300)}`,
    );
  assert.deepEqual(refused, [], 'no sample is refused');
  for (const { method, template, res } of sent) assertResponseMatches(doc, method, template, res);
});

test('the samples hold values a reader recognises: no schema placeholders, no out-of-range numbers, ids left for the reader to fill', async () => {
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  const unreal: string[] = [];
  for (const item of Object.values<Record<string, any>>(doc.paths)) {
    for (const op of Object.values(item)) {
      const { url, body } = parseCurl(op['x-codeSamples'][0].source);
      // A placeholder is an id (in the path, the query or the body), nothing else.
      for (const [, name] of `${url} ${body ?? ''}`.matchAll(/<(\w+)>/g))
        if (!/^(id|key|\w+_id)$/.test(name)) unreal.push(`${op.operationId}: <${name}>`);
      if (/-1000000|"string"|00000000-0000/.test(body ?? '')) unreal.push(`${op.operationId}: ${body}`);
    }
  }
  assert.deepEqual(unreal, []);
  const movement = parseCurl(doc.paths['/api/v1/inventory/movements'].post['x-codeSamples'][0].source);
  assert.deepEqual(JSON.parse(movement.body!), { product_id: '<product_id>', type: 'delivery', qty: 10 });
  const webhook = JSON.parse(parseCurl(doc.paths['/api/v1/webhooks'].post['x-codeSamples'][0].source).body!);
  assert.equal(webhook.url, `${doc.servers[0].url}/api/webhooks/sink`, 'a URL the service takes: its own debug sink');
});

test('every JSON success has a response sample recorded from a running service, and it validates against its own schema', async () => {
  const doc = (await http(svc.url, 'GET', '/api/v1/openapi.json')).body;
  const missing: string[] = [];
  for (const [template, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const successes = Object.entries(op.responses as Record<string, any>).filter(([code]) => /^2/.test(code));
      if (!successes.some(([, r]) => r.content?.['application/json'])) continue; // the PDF label
      // The operation's own success carries the sample (a write's 202 may be an approval, its 200 a dry run).
      const found = successes.find(([, r]) => r.content?.['application/json']?.example !== undefined);
      if (!found) {
        missing.push(op.operationId);
        continue;
      }
      const [status, success] = found;
      const json = success.content['application/json'];
      const outcome = validateResponse(doc, method, template, Number(status), json.example, 'application/json');
      assert.ok(outcome.valid, `${op.operationId}: its sample no longer validates (npm run samples:responses): ${outcome.errors.join('; ')}`);
    }
  }
  assert.deepEqual(missing, [], 'operations without a recorded sample: npm run samples:responses');
  // Real answers, not the schema's placeholders, in this instance's addresses.
  const order = doc.paths['/api/v1/orders/{id}'].get.responses['200'].content['application/json'].example.data;
  assert.equal(typeof order.number, 'number');
  assert.ok(order.number > 0 && ['pending', 'paid'].includes(order.payment_status), JSON.stringify(order));
  const shipment = doc.paths['/api/v1/orders/{id}/shipment'].get.responses['200'].content['application/json'].example.data;
  assert.match(shipment.tracking_number, /\w{6,}/);
  const sink = doc.paths['/api/v1/webhooks'].post.responses['201'].content['application/json'].example.data.url;
  assert.ok(sink.startsWith(`${doc.servers[0].url}/api/webhooks/sink?id=`), sink);
});
