// Per-key limits with rate-limiter-flexible: in memory on one instance, in
// Redis (REDIS_URL) when several instances must share them (SPEC Limits).
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

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

/** Where the counters live: in Redis, shared by every instance; or in this process only (Redis unset or unreachable). */
export type RedisState = 'not_configured' | 'connected' | 'unavailable';

export interface RateLimits {
  /** 300 REST requests per minute per key (SPEC Limits; RATE_LIMIT_REST_PER_MINUTE). */
  rest: Limiter;
  /** 120 MCP JSON-RPC messages per minute per key; a batch of N counts N (RATE_LIMIT_MCP_PER_MINUTE). */
  mcp: Limiter;
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
    log.warn({ redis: 'unavailable', reason: why }, 'REDIS_URL is set but Redis is unreachable: rate limits fall back to per-instance counters and are not shared until it is back');
  };
  redis.on('ready', () => {
    settle();
    if (announced && state === 'unavailable') log.info({ redis: 'connected' }, 'Redis is reachable again: rate limits are shared between instances again');
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
  perMinute: { restPerMinute: number; mcpPerMinute: number },
  log: Log = { warn: () => {}, info: () => {} },
): RateLimits {
  const shared = redisUrl ? connectRedis(redisUrl, log) : null;
  const make = (keyPrefix: string, points: number) => {
    const options = { keyPrefix: `merx:${keyPrefix}`, points, duration: 60 };
    const memory = new RateLimiterMemory(options);
    // If Redis goes away, each instance keeps limiting on its own rather than failing requests.
    const limiter = shared ? new RateLimiterRedis({ ...options, storeClient: shared.redis, insuranceLimiter: memory }) : memory;
    return new Limiter(limiter, points);
  };
  const named = new Map<string, Limiter>();
  return {
    rest: make('rest', perMinute.restPerMinute),
    mcp: make('mcp', perMinute.mcpPerMinute),
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
