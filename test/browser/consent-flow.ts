// EXTENSIONS 10 in the browser: the consent page of /oauth/authorize at a
// width (1440 or 390 px): who asks, its redirect host, the scopes asked; a
// wrong key keeps the person on the page with its error; a scope unticked,
// writes left waiting for approval, Approve; the browser lands on the client's
// redirect URI with code, state and iss, and the code gives exactly the
// scopes left ticked. Then the console's Connected apps shows the app and
// Revoke ends its token. Used by test/oauth-consent-browser.test.ts and
// scripts/screenshots.ts.
import http from 'node:http';
import path from 'node:path';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { freshTenant, http as call } from '../helpers/harness.ts';
import { authorizationRequest, form, pkce } from '../helpers/oauth.ts';

export interface ConsentFlowOptions {
  browser: Browser;
  /** The service's address, which must be its PUBLIC_BASE_URL (the resource is checked). */
  baseUrl: string;
  adminToken: string;
  width: number;
  shotsDir: string;
}

const WAIT = { timeout: 20_000 };

/** The client's end of the redirect: a loopback page that answers "connected". */
async function callbackServer() {
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Connected</h1>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, close: () => new Promise((r) => server.close(r)) };
}

export async function runConsentFlow(options: ConsentFlowOptions) {
  const { baseUrl, width } = options;
  const t = await freshTenant(baseUrl, { preset: 'fulfilment' });
  const callback = await callbackServer();
  const screenshots: string[] = [];
  const context = await options.browser.newContext({ viewport: { width, height: width > 600 ? 900 : 844 }, baseURL: baseUrl });
  const page = await context.newPage();
  const shot = async (name: string) => {
    const file = path.join(options.shotsDir, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    screenshots.push(file);
  };
  const fitsWidth = async () => {
    const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(scroll <= inner, `the page is ${scroll} px wide in a ${inner} px window`);
  };
  try {
    const registered = await call(baseUrl, 'POST', '/oauth/register', { body: { client_name: 'Claude', redirect_uris: [callback.url] } });
    assert.equal(registered.status, 201, registered.text);
    const clientId = registered.body.client_id as string;
    const { verifier, challenge } = pkce();
    const request = authorizationRequest(baseUrl, clientId, challenge, {
      redirect_uri: callback.url,
      scope: 'orders:read orders:write shipments:read',
      state: `w${width}`,
    });

    await page.goto(`/oauth/authorize?${new URLSearchParams(request)}`);
    await page.getByRole('heading', { name: 'Claude wants to use your Merx shop' }).waitFor(WAIT);
    await page.getByText(new URL(callback.url).host).waitFor(WAIT);
    for (const scope of ['orders:read', 'orders:write', 'shipments:read']) assert.ok(await page.getByRole('checkbox', { name: scope }).isChecked());
    assert.ok(await page.getByRole('radio', { name: 'Writes wait for my approval' }).isChecked(), 'approval is on by default');
    await fitsWidth();
    await shot(`oauth-consent-${width}`);

    // A wrong key: 401, the page again with its error, nothing sent to the client.
    await page.getByLabel('API key of the shop, or the operator token').fill('merx_wrongwrongwrongwrongwrongwrongwrongwrong');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor(WAIT);
    assert.ok(page.url().startsWith(baseUrl), page.url());
    await fitsWidth();
    await shot(`oauth-consent-error-${width}`);

    // The person unticks orders:write, keeps approval on, pastes the key, approves.
    await page.getByRole('checkbox', { name: 'orders:write' }).uncheck();
    await page.getByLabel('API key of the shop, or the operator token').fill(t.key);
    await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.url), WAIT), page.getByRole('button', { name: 'Approve' }).click()]);
    const back = new URL(page.url());
    assert.equal(back.searchParams.get('state'), `w${width}`);
    assert.equal(back.searchParams.get('iss'), baseUrl);
    const tokens = await form(baseUrl, '/oauth/token', {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      client_id: clientId,
      redirect_uri: callback.url,
      code_verifier: verifier,
      resource: `${baseUrl}/api/mcp`,
    });
    assert.equal(tokens.status, 200, tokens.text);
    assert.equal(tokens.body.scope, 'orders:read shipments:read');
    const access = tokens.body.access_token as string;
    assert.equal((await call(baseUrl, 'GET', '/api/v1/orders', { token: access })).status, 200);

    // The console: Connected apps lists it; Revoke ends its token at once.
    await page.goto('/admin');
    await page.getByLabel('Operator token').fill(options.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Accounts', exact: true }).waitFor(WAIT);
    await page.goto(`/admin/accounts/${t.accountId}/apps`);
    const table = page.getByRole('table', { name: 'Connected apps' });
    await table.getByText('Claude').waitFor(WAIT);
    await table.getByText('orders:read shipments:read').waitFor(WAIT);
    await table.getByText('approval').waitFor(WAIT);
    await shot(`connected-apps-${width}`);
    page.once('dialog', (dialog) => dialog.accept());
    await table.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No connected apps.').waitFor(WAIT);
    assert.equal((await call(baseUrl, 'GET', '/api/v1/orders', { token: access })).status, 401);
    return { screenshots };
  } finally {
    await context.close();
    await callback.close();
  }
}
