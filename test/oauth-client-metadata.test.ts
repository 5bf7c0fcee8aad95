// EXTENSIONS 10: a client whose client_id is the https URL of its metadata
// document. The document is fetched under the webhook URL policy: here the
// operator allows 127.0.0.1 (WEBHOOK_ALLOW_HOSTS, as the webhook tests do), so
// the receiver can serve it; without that, test/oauth.test.ts shows the refusal.
// Last, on a service of its own: the consent form's failed-credential limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, freshTenant, operator, type TestService } from './helpers/harness.ts';
import { freePort } from './helpers/service-child.ts';
import { startHttpsReceiver, type HttpsReceiver } from './helpers/https-receiver.ts';
import { REDIRECT_URI, authorizationRequest, consent, form, pkce } from './helpers/oauth.ts';

let svc: TestService;
let receiver: HttpsReceiver;
let base: string;

before(async () => {
  receiver = await startHttpsReceiver();
  process.env.NODE_EXTRA_CA_CERTS = receiver.caFile;
  const port = await freePort();
  // localhost, not 127.0.0.1: the receiver is on 127.0.0.1, and the policy refuses the service's own host.
  base = `http://localhost:${port}`;
  svc = await startTestService({ PORT: String(port), PUBLIC_BASE_URL: base, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
});
after(async () => {
  await svc.close();
  await receiver.close();
});

/** An endpoint serving `document(url)` as the client's metadata document. */
function documentAt(document: (url: string) => unknown, raw?: string) {
  const endpoint = receiver.endpoint('client');
  endpoint.script([], { status: 200, headers: { 'content-type': 'application/json' }, body: raw ?? JSON.stringify(document(endpoint.url)) });
  return endpoint;
}

const page = async (clientId: string) => {
  const res = await fetch(`${base}/oauth/authorize?${new URLSearchParams(authorizationRequest(base, clientId, pkce().challenge))}`, {
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
};

test('a metadata document naming itself and the redirect URI: the page names the client, and the flow completes with the URL as client_id', async () => {
  const t = await freshTenant(base);
  const endpoint = documentAt((url) => ({ client_id: url, client_name: 'Doc Agent', redirect_uris: [REDIRECT_URI] }));
  const shown = await page(endpoint.url);
  assert.equal(shown.status, 200, shown.text);
  assert.match(shown.text, /Doc Agent wants to use your Merx shop/);
  const { verifier, challenge } = pkce();
  const code = await consent(base, authorizationRequest(base, endpoint.url, challenge), t.key);
  const tokens = await form(base, '/oauth/token', {
    grant_type: 'authorization_code',
    code,
    client_id: endpoint.url,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    resource: `${base}/api/mcp`,
  });
  assert.equal(tokens.status, 200, tokens.text);
  const apps = (await operator(base).call('GET', `/accounts/${t.accountId}/connected-apps`)).data;
  assert.equal(apps[0].client_id, endpoint.url);
  assert.equal(apps[0].client_name, 'Doc Agent');
});

test('a metadata document is refused (400 page, no redirect) when it omits the redirect URI, names another client_id, is not JSON, exceeds 64 KB, or answers 404', async () => {
  const cases = [
    documentAt((url) => ({ client_id: url, client_name: 'X', redirect_uris: ['https://elsewhere.example/cb'] })),
    documentAt(() => ({ client_id: 'https://other.example/client.json', redirect_uris: [REDIRECT_URI] })),
    documentAt(() => null, 'not json'),
    documentAt((url) => ({ client_id: url, redirect_uris: [REDIRECT_URI], padding: 'x'.repeat(70 * 1024) })),
  ];
  const missing = receiver.endpoint('missing');
  missing.script([], { status: 404, body: 'no' });
  for (const endpoint of [...cases, missing]) {
    const shown = await page(endpoint.url);
    assert.equal(shown.status, 400, endpoint.url);
    assert.equal(shown.location, null);
  }
});

test('a metadata document that never answers is given up after 5 s (400 page)', async () => {
  const endpoint = receiver.endpoint('hang');
  endpoint.script([], { hang: true });
  const shown = await page(endpoint.url);
  assert.equal(shown.status, 400);
  assert.match(shown.text, /could not be fetched/);
});

test('wrong credentials on the consent form count as failed authentications: past the limit 429, with the page', async () => {
  const limited = await startTestService({ AUTH_FAILURES_PER_WINDOW: '3', PUBLIC_BASE_URL: 'http://127.0.0.1:1' });
  try {
    const clientId = (
      await (
        await fetch(`${limited.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [REDIRECT_URI] }),
        })
      ).json()
    ).client_id;
    const request = {
      ...authorizationRequest('http://127.0.0.1:1', clientId, pkce().challenge),
      credential: 'merx_wrongwrongwrongwrongwrongwrongwrongwrong',
      decision: 'approve',
    };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await form(limited.url, '/oauth/authorize', request)).status);
    assert.deepEqual(statuses.slice(0, 3), [401, 401, 401]);
    const last = await form(limited.url, '/oauth/authorize', request);
    assert.equal(last.status, 429);
    assert.ok(last.headers.get('retry-after'));
    assert.match(last.headers.get('content-type')!, /text\/html/);
    assert.equal(last.location, null);
  } finally {
    await limited.close();
  }
});
