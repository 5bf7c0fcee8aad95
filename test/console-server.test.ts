// How the service serves the operator console at /admin: the built app for
// every client-side route, its assets cached for good, the operator API's own
// 404s untouched, and a clear page instead of a crash when there is no build.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { startTestService, http, type TestService } from './helpers/harness.ts';
import { CONSOLE_DIST, registerConsole } from '../src/operator/console.ts';

const built = fs.existsSync(path.join(CONSOLE_DIST, 'index.html'));
let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc.close();
});

test(
  '/admin and its client-side routes answer the app; its assets are cached for good',
  { skip: !built && !process.env.CI && 'console/dist is not built' },
  async () => {
    for (const route of ['/admin', '/admin/', '/admin/accounts', '/admin/accounts/7d0c2b1e-0000-4000-8000-000000000000/webhooks']) {
      const res = await http(svc.url, 'GET', route);
      assert.equal(res.status, 200, route);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'; script-src 'self'/, 'nothing but its own files');
      assert.match(res.text, /<div id="root"><\/div>/);
    }
    const page = await http(svc.url, 'GET', '/admin');
    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(page.text)![1];
    const asset = await fetch(svc.url + script);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
  },
);

test('the operator API keeps its JSON answers under /admin: unknown routes are 404 not_found, docs and API still route', async () => {
  for (const route of ['/admin/api', '/admin/api/nope', '/admin/assets/missing.js']) {
    const res = await http(svc.url, 'GET', route);
    assert.equal(res.status, 404, route);
    assert.equal(res.body.error.code, 'not_found', route);
  }
  assert.equal((await http(svc.url, 'GET', '/admin/api/info')).status, 401, 'the operator API wants its token');
  assert.match((await http(svc.url, 'GET', '/admin/docs')).text, /Merx operator API/);
});

test('without a build (npm ci --omit=dev) /admin answers 503 with a page saying how to get one', async () => {
  const app = Fastify();
  registerConsole(app, fs.mkdtempSync(path.join(os.tmpdir(), 'merx-no-console-')));
  try {
    for (const route of ['/admin', '/admin/accounts']) {
      const res = await app.inject({ method: 'GET', url: route });
      assert.equal(res.statusCode, 503);
      assert.match(res.headers['content-type'] as string, /^text\/html/);
      assert.match(res.body, /not built/);
      assert.match(res.body, /npm run build:console/);
    }
  } finally {
    await app.close();
  }
});
