// Per-key limits with rate-limiter-flexible: in memory on one instance, in
// Redis (REDIS_URL) when several instances must share them (SPEC Limits).
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { Redis } from 'ioredis';

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

export interface RateLimits {
  /** 300 REST requests per minute per key (SPEC Limits; RATE_LIMIT_REST_PER_MINUTE). */
  rest: Limiter;
  /** 120 MCP JSON-RPC messages per minute per key; a batch of N counts N (RATE_LIMIT_MCP_PER_MINUTE). */
  mcp: Limiter;
  /** A named per-account limit (webhook test and retry: 30 per minute each). */
  named(name: string, points: number): Limiter;
  close(): Promise<void>;
}

export function createRateLimits(redisUrl: string | null, perMinute: { restPerMinute: number; mcpPerMinute: number }): RateLimits {
  const redis = redisUrl ? new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false }) : null;
  redis?.on('error', () => {});
  const make = (keyPrefix: string, points: number) => {
    const options = { keyPrefix: `merx:${keyPrefix}`, points, duration: 60 };
    const memory = new RateLimiterMemory(options);
    // If Redis goes away, each instance keeps limiting on its own rather than failing requests.
    const limiter = redis ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: memory }) : memory;
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
    async close() {
      await redis?.quit().catch(() => {});
    },
  };
}
