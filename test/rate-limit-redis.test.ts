// REDIS_URL: several instances share one budget per key (DESIGN: rate limits).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import crypto from 'node:crypto';
import { createRateLimits } from '../src/platform/edge/rate-limit.ts';
import { startTestService, freshTenant, http } from './helpers/harness.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisReachable(): Promise<boolean> {
  const { hostname, port } = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

const reachable = await redisReachable();
const skip = reachable ? false : `no Redis at ${REDIS_URL}`;

test('two instances with REDIS_URL draw on one budget per key', { skip }, async () => {
  const limits = { restPerMinute: 5, mcpPerMinute: 3 };
  const first = createRateLimits(REDIS_URL, limits);
  const second = createRateLimits(REDIS_URL, limits);
  await Promise.all([first.settled(), second.settled()]);
  assert.deepEqual([first.redisState(), second.redisState()], ['connected', 'connected']);
  try {
    const key = crypto.randomUUID();
    const seen: boolean[] = [];
    for (let i = 0; i < 6; i++) seen.push((await (i % 2 ? second : first).rest.consume(key)).allowed);
    assert.deepEqual(seen, [true, true, true, true, true, false], 'the 6th request is refused whichever instance takes it');
    const other = await first.rest.consume(crypto.randomUUID());
    assert.equal(other.allowed, true, 'another key has its own budget');
    assert.equal(other.remaining, 4);
  } finally {
    await first.close();
    await second.close();
  }
});

test('the service limits through Redis when REDIS_URL is set', { skip }, async () => {
  const svc = await startTestService({ REDIS_URL, RATE_LIMIT_REST_PER_MINUTE: '3' });
  try {
    const { key } = await freshTenant(svc.url);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await http(svc.url, 'GET', '/api/v1/orders', { token: key })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const res = await http(svc.url, 'GET', '/api/v1/orders', { token: key });
    assert.equal(res.headers.get('x-ratelimit-limit'), '3');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  } finally {
    await svc.close();
  }
});
