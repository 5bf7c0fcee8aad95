// Per-key limits with rate-limiter-flexible: in memory on one instance, in
// Redis (REDIS_URL) when several instances must share them (SPEC Limits).
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../contract/errors.ts';

export interface LimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  retryAfterSec: number;
}

export class Limiter {
  readonly points: number;
  private limiter: RateLimiterAbstract;

  constructor(limiter: RateLimiterAbstract, points: number) {
    this.limiter = limiter;
    this.points = points;
  }

  async consume(key: string, points = 1): Promise<LimitOutcome> {
    try {
      const res = await this.limiter.consume(key, points);
      return { allowed: true, limit: this.points, remaining: res.remainingPoints, retryAfterSec: Math.ceil(res.msBeforeNext / 1000) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return { allowed: false, limit: this.points, remaining: 0, retryAfterSec: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    }
  }
}

/**
 * Issue 27: failed authentications per client address (API keys and the
 * operator token counted apart). Up to `points` failures in a window answer
 * 401 as usual; past them the address gets 429 rate_limited until the window
 * ends, checked before any database lookup. Counted in Redis when REDIS_URL is
 * set, so an address is limited across instances.
 */
export class AuthFailureLimit {
  readonly points: number;
  private readonly limiter: RateLimiterAbstract;

  constructor(limiter: RateLimiterAbstract, points: number) {
    this.limiter = limiter;
    this.points = points;
  }

  /** Throws 429 while `address` is past the limit; costs no count. */
  async refuseIfLimited(address: string): Promise<void> {
    // A store that cannot answer lets the request through to the check, which counts (and limits) again.
    const state = await this.limiter.get(address).catch(() => null);
    if (state && state.consumedPoints > this.points) throw this.limited(state.msBeforeNext);
  }

  /** Counts one failure for `address` and throws `refusal` (the 401), or 429 once past the limit. */
  async failed(address: string, refusal: unknown): Promise<never> {
    try {
      await this.limiter.consume(address);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw this.limited(rejection.msBeforeNext);
      // The counter's store failed: the request still gets its 401.
    }
    throw refusal;
  }

  private limited(msBeforeNext: number): AppError {
    const retryAfterSec = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new AppError(
      'rate_limited',
      'too many failed authentications from this address; retry after the Retry-After seconds',
      { retry_after_sec: retryAfterSec },
      {
        headers: { 'Retry-After': String(retryAfterSec) },
      },
    );
  }
}

/** Where the counters live: in Redis, shared by every instance; or in this process only (Redis unset or unreachable). */
export type RedisState = 'not_configured' | 'connected' | 'unavailable';

export interface RateLimits {
  /** 300 REST requests per minute per key (SPEC Limits; RATE_LIMIT_REST_PER_MINUTE). */
  rest: Limiter;
  /** 120 MCP JSON-RPC messages per minute per key; a batch of N counts N (RATE_LIMIT_MCP_PER_MINUTE). */
  mcp: Limiter;
  /** Failed authentications per client address (AUTH_FAILURES_PER_WINDOW in AUTH_FAILURES_WINDOW_SEC; issue 27). */
  authFailures: AuthFailureLimit;
  /** A named per-account limit (webhook test and retry: 30 per minute each). */
  named(name: string, points: number): Limiter;
  /** Shown on /healthz, so an operator sees when limits are no longer shared. */
  redisState(): RedisState;
  /** Resolves once Redis has answered or failed to, waiting at most `ms`: the state is known before the service listens. */
  settled(ms?: number): Promise<void>;
  close(): Promise<void>;
}

type Log = Pick<FastifyBaseLogger, 'warn' | 'info'>;

/**
 * One Redis connection for every limiter. Commands fail at once while it is
 * down (no offline queue), so each limiter falls back to its in-memory
 * insurance limiter without waiting; losing and regaining Redis is logged
 * once each, not at every reconnection attempt.
 */
function connectRedis(redisUrl: string, log: Log) {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  let state: RedisState = 'unavailable';
  let announced = false;
  let settle: () => void = () => {};
  const settledOnce = new Promise<void>((resolve) => (settle = resolve));
  const lost = (why: string) => {
    settle();
    if (state === 'unavailable' && announced) return;
    state = 'unavailable';
    announced = true;
    log.warn(
      { redis: 'unavailable', reason: why },
      'REDIS_URL is set but Redis is unreachable: rate limits fall back to per-instance counters and are not shared until it is back',
    );
  };
  redis.on('ready', () => {
    settle();
    if (announced && state === 'unavailable')
      log.info({ redis: 'connected' }, 'Redis is reachable again: rate limits are shared between instances again');
    state = 'connected';
  });
  redis.on('error', (err: Error) => lost(err.message));
  redis.on('end', () => lost('connection closed'));
  return {
    redis,
    state: () => state,
    async settled(ms: number) {
      const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
      if ((await Promise.race([settledOnce, timeout])) === 'timeout' && state !== 'connected') lost(`no answer within ${ms} ms`);
    },
  };
}

export function createRateLimits(
  redisUrl: string | null,
  perMinute: { restPerMinute: number; mcpPerMinute: number; authFailures?: { points: number; windowSec: number } },
  log: Log = { warn: () => {}, info: () => {} },
): RateLimits {
  const shared = redisUrl ? connectRedis(redisUrl, log) : null;
  const store = (keyPrefix: string, points: number, duration = 60) => {
    const options = { keyPrefix: `merx:${keyPrefix}`, points, duration };
    const memory = new RateLimiterMemory(options);
    // If Redis goes away, each instance keeps limiting on its own rather than failing requests.
    return shared ? new RateLimiterRedis({ ...options, storeClient: shared.redis, insuranceLimiter: memory }) : memory;
  };
  const make = (keyPrefix: string, points: number) => new Limiter(store(keyPrefix, points), points);
  const failures = perMinute.authFailures ?? { points: 1000, windowSec: 60 };
  const named = new Map<string, Limiter>();
  return {
    rest: make('rest', perMinute.restPerMinute),
    mcp: make('mcp', perMinute.mcpPerMinute),
    authFailures: new AuthFailureLimit(store('auth-failures', failures.points, failures.windowSec), failures.points),
    named(name, points) {
      if (!named.has(name)) named.set(name, make(name, points));
      return named.get(name)!;
    },
    redisState: () => shared?.state() ?? 'not_configured',
    settled: async (ms = 2000) => shared?.settled(ms),
    async close() {
      if (!shared) return;
      shared.redis.removeAllListeners('end');
      await shared.redis.quit().catch(() => shared.redis.disconnect());
    },
  };
}
