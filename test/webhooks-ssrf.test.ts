// SSRF: webhook URLs that would make the service call somewhere it must not
// (SPEC Endpoints > Webhooks, URL rules; GAPS Webhooks details.reason and
// self_target). Every hostile URL is refused on create and on update with 400
// validation_failed and the exact details.reason.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns/promises';
import os from 'node:os';
import ipaddr from 'ipaddr.js';
import { startTestService, http, freshTenant, type TestService } from './helpers/harness.ts';
import { createWebhook, deliveriesOf, eventually, touchOrder } from './helpers/webhooks.ts';
import { checkWebhookUrl } from '../src/modules/webhooks/subscriptions/url-policy.ts';

const OWN_HOST = 'merx.example.test';
let svc: TestService;
let allowing: TestService;

before(async () => {
  // The service's own public host is merx.example.test; no operator allow list.
  svc = await startTestService({ PUBLIC_BASE_URL: `https://${OWN_HOST}`, WORKERS: '0' });
  // An operator allows loopback, one private /16 and, to no effect, its own host.
  allowing = await startTestService({
    PUBLIC_BASE_URL: `https://${OWN_HOST}`,
    WEBHOOK_ALLOW_HOSTS: `127.0.0.1,10.1.0.0/16,${OWN_HOST}`,
    WORKERS: '0',
  });
});
after(async () => {
  await svc?.close();
  await allowing?.close();
});

type Reason = 'scheme' | 'credentials' | 'host_blocked' | 'private_ip' | 'self_target' | 'dns_private' | 'dns_failed';

const HOSTILE: Array<[string, Reason]> = [
  // scheme
  ['http://93.184.216.34/hook', 'scheme'],
  ['ftp://93.184.216.34/hook', 'scheme'],
  ['file:///etc/passwd', 'scheme'],
  ['gopher://127.0.0.1:6379/_FLUSHALL', 'scheme'],
  ['javascript:alert(1)', 'scheme'],
  ['not-a-url-at-all', 'scheme'],
  ['http://user:pw@10.0.0.1/', 'scheme'],
  [`http://${OWN_HOST}/api/webhooks/sink?id=00000000-0000-4000-8000-000000000000`, 'scheme'],
  // credentials
  ['https://user:pw@93.184.216.34/hook', 'credentials'],
  ['https://user@93.184.216.34/hook', 'credentials'],
  ['https://:secret@93.184.216.34/hook', 'credentials'],
  ['https://93.184.216.34@127.0.0.1/hook', 'credentials'],
  // host_blocked
  ['https://localhost/hook', 'host_blocked'],
  ['https://LOCALHOST:8443/hook', 'host_blocked'],
  ['https://localhost./hook', 'host_blocked'],
  ['https://foo.local/hook', 'host_blocked'],
  ['https://printer.LOCAL/hook', 'host_blocked'],
  ['https://x.internal/hook', 'host_blocked'],
  ['https://metadata.google.internal/computeMetadata/v1/', 'host_blocked'],
  // private_ip: loopback in every notation the URL parser accepts
  ['https://127.0.0.1/hook', 'private_ip'],
  ['https://127.0.0.1:443/hook', 'private_ip'],
  ['https://127.1/hook', 'private_ip'],
  ['https://127.255.255.254/hook', 'private_ip'],
  ['https://2130706433/hook', 'private_ip'],
  ['https://0x7f000001/hook', 'private_ip'],
  ['https://0177.0.0.1/hook', 'private_ip'],
  ['https://0x7f.0.0.1/hook', 'private_ip'],
  ['https://017700000001/hook', 'private_ip'],
  ['https://127.000.000.001/hook', 'private_ip'],
  // private_ip: private, carrier-grade NAT, link-local / metadata, unspecified
  ['https://10.0.0.1/hook', 'private_ip'],
  ['https://10.255.255.255/hook', 'private_ip'],
  ['https://172.16.5.4/hook', 'private_ip'],
  ['https://172.31.255.255/hook', 'private_ip'],
  ['https://192.168.0.1/hook', 'private_ip'],
  ['https://100.64.0.1/hook', 'private_ip'],
  ['https://100.127.255.255/hook', 'private_ip'],
  ['https://169.254.169.254/latest/meta-data/', 'private_ip'],
  ['https://169.254.0.1/hook', 'private_ip'],
  ['https://0.0.0.0/hook', 'private_ip'],
  ['https://0/hook', 'private_ip'],
  // private_ip: IPv6 literals, including IPv4-mapped forms
  ['https://[::1]/hook', 'private_ip'],
  ['https://[0:0:0:0:0:0:0:1]/hook', 'private_ip'],
  ['https://[::]/hook', 'private_ip'],
  ['https://[fc00::1]/hook', 'private_ip'],
  ['https://[fd12::1]/hook', 'private_ip'],
  ['https://[fe80::1]/hook', 'private_ip'],
  ['https://[::ffff:127.0.0.1]/hook', 'private_ip'],
  ['https://[::ffff:10.0.0.1]/hook', 'private_ip'],
  ['https://[::ffff:7f00:1]/hook', 'private_ip'],
  ['https://[::ffff:a9fe:a9fe]/latest/meta-data/', 'private_ip'],
  // private_ip: only global unicast is public; forms that embed an IPv4 address, deprecated and special-purpose ranges
  ['https://[::127.0.0.1]/x', 'private_ip'], // IPv4-compatible ::/96
  ['https://[::a9fe:a9fe]/x', 'private_ip'], // IPv4-compatible 169.254.169.254
  ['https://[::8.8.8.8]/x', 'private_ip'], // IPv4-compatible, whatever it carries
  ['https://[fec0::1]/x', 'private_ip'], // deprecated site-local
  ['https://[64:ff9b::7f00:1]/x', 'private_ip'], // NAT64 of 127.0.0.1
  ['https://[64:ff9b::10.0.0.1]/x', 'private_ip'], // NAT64 of 10.0.0.1
  ['https://[64:ff9b::a9fe:a9fe]/x', 'private_ip'], // NAT64 of the metadata address
  ['https://[64:ff9b:1::a00:1]/x', 'private_ip'], // local-use NAT64 (RFC 8215)
  ['https://[2002:7f00:1::1]/x', 'private_ip'], // 6to4 of 127.0.0.1
  ['https://[2002:a9fe:a9fe::1]/x', 'private_ip'], // 6to4 of 169.254.169.254
  ['https://[2002:c0a8:101::1]/x', 'private_ip'], // 6to4 of 192.168.1.1
  ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x', 'private_ip'], // Teredo, client 127.0.0.1
  ['https://[2001::ffff:ffff]/x', 'private_ip'], // Teredo
  ['https://[::ffff:0:7f00:1]/x', 'private_ip'], // IPv4-translated (RFC 6145)
  ['https://[100::1]/x', 'private_ip'], // discard-only 100::/64
  ['https://[2001:db8::1]/x', 'private_ip'], // documentation
  ['https://[2001:2::1]/x', 'private_ip'], // benchmarking
  ['https://[4000::1]/x', 'private_ip'], // outside 2000::/3, not allocated
  ['https://[ff02::1]/x', 'private_ip'], // multicast
  ['https://198.18.0.1/x', 'private_ip'], // benchmarking 198.18.0.0/15
  ['https://198.19.255.254/x', 'private_ip'],
  ['https://240.0.0.1/x', 'private_ip'], // reserved 240.0.0.0/4
  ['https://255.255.255.255/x', 'private_ip'],
  ['https://0.1.2.3/x', 'private_ip'], // 0.0.0.0/8
  ['https://192.0.0.8/x', 'private_ip'], // IETF protocol assignments
  ['https://192.0.2.1/x', 'private_ip'], // documentation
  ['https://203.0.113.5/x', 'private_ip'],
  ['https://224.0.0.1/x', 'private_ip'], // multicast
  // self_target: the service's own host, any port, any path but the sink
  [`https://${OWN_HOST}/hook`, 'self_target'],
  [`https://${OWN_HOST}:8443/hook`, 'self_target'],
  [`https://${OWN_HOST.toUpperCase()}/api/v1/orders`, 'self_target'],
  [`https://${OWN_HOST}./hook`, 'self_target'],
  // dns_failed
  ['https://x.invalid/hook', 'dns_failed'],
  ['https://no-such-host.merx-test.invalid/hook', 'dns_failed'],
];

async function expectRefused(base: string, key: string, url: string, reason: Reason) {
  const res = await http(base, 'POST', '/api/v1/webhooks', { token: key, body: { url, events: ['order.updated'] } });
  assert.equal(res.status, 400, `${url}: expected 400 ${reason}, got ${res.status} ${res.text}`);
  assert.equal(res.body.error.code, 'validation_failed', url);
  assert.equal(res.body.error.details?.reason, reason, `${url}: details.reason`);
}

test(`a table of ${HOSTILE.length} hostile URLs is refused on create with the exact details.reason`, async () => {
  assert.ok(HOSTILE.length >= 30);
  const { key } = await freshTenant(svc.url);
  const failures: string[] = [];
  for (const [url, reason] of HOSTILE) {
    try {
      await expectRefused(svc.url, key, url, reason);
    } catch (err) {
      failures.push((err as Error).message.split('\n')[0]);
    }
  }
  assert.deepEqual(failures, [], `refused with the wrong outcome:\n${failures.join('\n')}`);
  const list = await http(svc.url, 'GET', '/api/v1/webhooks', { token: key });
  assert.deepEqual(list.body.data, [], 'nothing was created');
});

test('the same URLs are refused on PATCH, which changes nothing', async () => {
  const { key } = await freshTenant(svc.url);
  const { data: sub } = await createWebhook(svc.url, key, { url: 'https://93.184.216.34/hook', events: ['order.updated'] });
  const failures: string[] = [];
  for (const [url, reason] of HOSTILE) {
    const res = await http(svc.url, 'PATCH', `/api/v1/webhooks/${sub.id}`, { token: key, body: { url } });
    if (res.status !== 400 || res.body.error.code !== 'validation_failed' || res.body.error.details?.reason !== reason) {
      failures.push(`${url}: expected 400 ${reason}, got ${res.status} ${res.text}`);
    }
  }
  assert.deepEqual(failures, []);
  const list = await http(svc.url, 'GET', '/api/v1/webhooks', { token: key });
  assert.equal(list.body.data[0].url, 'https://93.184.216.34/hook');
});

test('a dry run checks the URL too', async () => {
  const { key } = await freshTenant(svc.url);
  const res = await http(svc.url, 'POST', '/api/v1/webhooks', {
    token: key,
    headers: { 'x-merx-dry-run': '1' },
    body: { url: 'https://169.254.169.254/', events: ['order.updated'] },
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.details.reason, 'private_ip');
});

test('a hostname that resolves to a private address: dns_private', async (t) => {
  // Offline, the machine's own name usually resolves through /etc/hosts to a loopback or private address.
  const host = os.hostname().toLowerCase();
  let addresses: string[] = [];
  try {
    addresses = (await dns.lookup(host, { all: true })).map((a) => a.address);
  } catch {
    addresses = [];
  }
  const isPrivate = (a: string) => ipaddr.process(a).range() !== 'unicast';
  if (addresses.length === 0 || !addresses.every(isPrivate) || host === 'localhost' || /\.(local|internal)$/.test(host)) {
    t.skip(
      `the host name ${host} does not resolve to private addresses only here (${addresses.join(', ') || 'no answer'}); covered by the unit test below`,
    );
    return;
  }
  const { key } = await freshTenant(svc.url);
  await expectRefused(svc.url, key, `https://${host}/hook`, 'dns_private');
  await expectRefused(svc.url, key, `https://${host}:8443/hook`, 'dns_private');
});

test('checkWebhookUrl resolves the host and checks every address (stub resolver)', async () => {
  const policy = (answers: Record<string, string[]>) => ({
    publicBaseUrl: `https://${OWN_HOST}`,
    allowHosts: [],
    resolve: async (host: string) => {
      if (!(host in answers)) throw new Error('ENOTFOUND');
      return answers[host];
    },
  });
  const answers = {
    'rebind.example.com': ['127.0.0.1'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
    'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946', 'fd00::5'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'cgnat.example.com': ['100.100.100.100'],
    'compat.example.com': ['::127.0.0.1'],
    'nat64.example.com': ['64:ff9b::a00:1'],
    'sixtofour.example.com': ['2002:a9fe:a9fe::1'],
    'sitelocal.example.com': ['fec0::1', '93.184.216.34'],
    'bench.example.com': ['198.18.0.1'],
    'reserved.example.com': ['240.0.0.1'],
    'public.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'empty.example.com': [],
  };
  const reasonOf = async (url: string) => {
    try {
      await checkWebhookUrl(url, policy(answers));
      return 'accepted';
    } catch (err) {
      return (err as { details?: { reason?: string } }).details?.reason;
    }
  };
  assert.equal(await reasonOf('https://rebind.example.com/hook'), 'dns_private');
  assert.equal(await reasonOf('https://mixed.example.com/hook'), 'dns_private', 'one private address among public ones is enough');
  assert.equal(await reasonOf('https://v6.example.com/hook'), 'dns_private');
  assert.equal(await reasonOf('https://mapped.example.com/hook'), 'dns_private');
  assert.equal(await reasonOf('https://cgnat.example.com/hook'), 'dns_private');
  for (const host of ['compat', 'nat64', 'sixtofour', 'sitelocal', 'bench', 'reserved']) {
    assert.equal(await reasonOf(`https://${host}.example.com/hook`), 'dns_private', `${host}: every resolved address must be global unicast`);
  }
  assert.equal(await reasonOf('https://nowhere.example.com/hook'), 'dns_failed');
  assert.equal(await reasonOf('https://empty.example.com/hook'), 'dns_failed');
  assert.equal(await reasonOf('https://public.example.com/hook'), 'accepted');
  const target = await checkWebhookUrl('https://public.example.com/hook', policy(answers));
  assert.equal(target.kind, 'remote');
  if (target.kind === 'remote') assert.equal(target.address, '93.184.216.34', 'the send connects to an address that was checked');
});

test('public targets pass: IPv4 and IPv6 literals, boundaries of the refused ranges', async () => {
  const { key } = await freshTenant(svc.url);
  for (const url of [
    'https://93.184.216.34/hook',
    'https://93.184.216.34:8443/path?x=1',
    'https://[2606:4700:4700::1111]/hook',
    'https://172.15.255.255/hook',
    'https://172.32.0.1/hook',
    'https://100.63.255.255/hook',
    'https://100.128.0.1/hook',
    'https://11.0.0.1/hook',
    'https://192.169.0.1/hook',
    'https://198.17.255.255/hook',
    'https://198.20.0.1/hook',
    'https://223.255.255.254/hook',
    'https://[2a00:1450:4001:81b::200e]/hook',
    'https://[2001:4860:4860::8888]/hook',
  ]) {
    const res = await http(svc.url, 'POST', '/api/v1/webhooks', { token: key, body: { url, events: ['order.updated'] } });
    assert.equal(res.status, 201, `${url}: ${res.status} ${res.text}`);
  }
});

test("the service's own debug sink is the one own-host URL allowed", async () => {
  const { key } = await freshTenant(svc.url);
  const res = await http(svc.url, 'POST', '/api/v1/webhooks', {
    token: key,
    body: { url: `https://${OWN_HOST}/api/webhooks/sink`, events: ['order.updated'] },
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.data.url, `https://${OWN_HOST}/api/webhooks/sink?id=${res.body.data.id}`);
  await expectRefused(svc.url, key, `https://${OWN_HOST}/api/webhooks/sinkhole`, 'self_target');
  await expectRefused(svc.url, key, `https://${OWN_HOST}/api/webhooks/sink/../../v1/orders`, 'self_target');
});

test('WEBHOOK_ALLOW_HOSTS lets listed private targets through but never lifts self_target', async () => {
  const { key } = await freshTenant(allowing.url);
  for (const url of ['https://127.0.0.1:8443/hook', 'https://10.1.2.3/hook', 'https://10.1.255.254:9000/x']) {
    const res = await http(allowing.url, 'POST', '/api/v1/webhooks', { token: key, body: { url, events: ['order.updated'] } });
    assert.equal(res.status, 201, `${url}: ${res.status} ${res.text}`);
  }
  await expectRefused(allowing.url, key, 'https://10.2.0.1/hook', 'private_ip');
  await expectRefused(allowing.url, key, 'https://192.168.1.1/hook', 'private_ip');
  await expectRefused(allowing.url, key, 'https://169.254.169.254/', 'private_ip');
  await expectRefused(allowing.url, key, 'https://localhost/hook', 'host_blocked');
  await expectRefused(allowing.url, key, `https://${OWN_HOST}/hook`, 'self_target');
  await expectRefused(allowing.url, key, `https://${OWN_HOST}:8443/hook`, 'self_target');
  await expectRefused(allowing.url, key, 'http://127.0.0.1:8443/hook', 'scheme');
  await expectRefused(allowing.url, key, 'https://u:p@127.0.0.1:8443/hook', 'credentials');
});

test('before every send: a stored URL that is no longer a global unicast target is not called, the delivery fails', async () => {
  const { op, accountId, key } = await freshTenant(svc.url);
  const { data: sub } = await createWebhook(svc.url, key, { url: 'https://93.184.216.34/hook', events: ['order.updated'] });
  // As if the row had been written under an older, weaker rule.
  await svc.service.db.query('UPDATE webhook_subscriptions SET url = $2 WHERE id = $1', [sub.id, 'https://[::127.0.0.1]/x']);
  const order = await op.checkout(accountId);
  await touchOrder(svc.url, key, order.id);
  const failed = await eventually(
    async () => (await deliveriesOf(svc.url, key, sub.id)).find((d: any) => d.status === 'failed'),
    'the failed delivery',
  );
  assert.match(failed.last_error, /private|public|address/i, failed.last_error);
  assert.equal(failed.last_status_code, null, 'nothing was called');
});
