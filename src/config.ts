// Environment -> one typed, validated config object. A bad value stops the
// process at start-up with a message naming the variable.
import os from 'node:os';
import { KEYS_VARIABLE, parseKeys, type SealingKey } from './platform/edge/secret-box.ts';
import v8 from 'node:v8';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | null;
  /** PostgreSQL connections this process keeps (DB_POOL_MAX; default from the machine's cores). */
  poolMax: number;
  /**
   * Issue 32: PostgreSQL itself, when DATABASE_URL is a transaction pooler
   * (PgBouncer): LISTEN, migrations and the background pool use it. Null: DATABASE_URL is direct.
   */
  databaseDirectUrl: string | null;
  /** Named prepared statements on DATABASE_URL (off through a transaction pooler; DATABASE_PREPARED_STATEMENTS). */
  preparedStatements: boolean;
  /** Streaming read replicas (DATABASE_READ_URLS) and how far behind one may be before it is left out. */
  readReplicas: { urls: string[]; maxLagMs: number; waitMs: number; prepared: boolean };
  dataDir: string;
  publicBaseUrl: string;
  adminToken: string | null;
  /** ENCRYPTION_KEYS: the keys that seal secrets at rest, the first sealing (null: the key file in DATA_DIR). */
  encryptionKeys: SealingKey[] | null;
  deploySha: string | null;
  seedDemo: boolean;
  redisUrl: string | null;
  smtpUrl: string | null;
  webhookAllowHosts: string[];
  /** The webhook sender thread's nice value (WEBHOOK_SENDER_NICE, 0-19): background work yields the cores to API requests. */
  webhookSenderNice: number;
  courierMode: 'simulator' | 'live';
  /** Couriers' base URLs in live mode, by variable: every COURIER_<X>_URL set (each courier's provider names its own). */
  courierUrls: Record<string, string>;
  courierTimeoutMs: number;
  /** EXTENSIONS 8: how long a claimed batch item stays this instance's without renewal (a dead instance's items wait this long). */
  batchLeaseSec: number;
  /** How long a client has to send a whole request, headers and body (REQUEST_TIMEOUT_MS; issue 27): then 408 request_timeout. */
  requestTimeoutMs: number;
  /** SPEC Limits by default; an operator may raise them (benchmarks, dedicated deployments). */
  rateLimits: {
    restPerMinute: number;
    mcpPerMinute: number;
    /** Failed authentications (API keys, operator token) per client address per window before 429 (issue 27). */
    authFailures: { points: number; windowSec: number };
  };
  /** LOG_LEVEL when set; else the format decides (src/platform/edge/logger.ts: warn in a terminal, info otherwise). */
  logLevel: string | null;
  /** LOG_FORMAT (json or pretty) when set; else pretty when stdout is a terminal, json otherwise. */
  logFormat: 'json' | 'pretty' | null;
  production: boolean;
  inventoryEnabled: boolean;
  /** Run the scheduled workers in this process (WORKERS=0 leaves them to the operator's jobs API or another instance). */
  workers: boolean;
  /** Load shedding (issue 27): past any bound, requests are answered 503 unavailable at once; 0 turns a bound off. */
  overload: OverloadBounds;
}

export interface OverloadBounds {
  /** OVERLOAD_SHEDDING=0 turns shedding off (benchmarks' "before"). */
  enabled: boolean;
  /** Requests this instance has admitted and not yet answered (OVERLOAD_MAX_IN_FLIGHT): its queue. */
  maxInFlight: number;
  /** Mean event-loop delay over a sample, ms (OVERLOAD_MAX_EVENT_LOOP_DELAY_MS). */
  maxEventLoopDelayMs: number;
  /** Event-loop utilisation over a sample, 0..1 (OVERLOAD_MAX_EVENT_LOOP_UTILIZATION; 0 = off). */
  maxEventLoopUtilization: number;
  /** V8 heap in use, bytes (OVERLOAD_MAX_HEAP_MB). */
  maxHeapUsedBytes: number;
  /** How often the measures are taken, ms (OVERLOAD_SAMPLE_INTERVAL_MS). */
  sampleIntervalMs: number;
  /** Retry-After of a shed request, s (OVERLOAD_RETRY_AFTER_SEC). */
  retryAfterSec: number;
}

/**
 * One event loop keeps a few connections per core busy: while some wait on
 * the network, others run in PostgreSQL (issue 12).
 */
export function defaultPoolSize(): number {
  return Math.min(32, Math.max(4, os.availableParallelism() * 4));
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return Number(raw);
}

/** A fraction written as a decimal between 0 and 1 (0 turns the bound off). */
function fraction(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^(0|1|0?\.\d+|1\.0+)$/.test(raw)) throw new ConfigError(`${name} must be a number between 0 and 1, got "${raw}"`);
  return Number(raw);
}

/**
 * The heap bound by default: 90% of the heap V8 allows this process, so an
 * instance refuses new work before it runs out of memory rather than after.
 */
function defaultMaxHeapMb(): number {
  return Math.floor((v8.getHeapStatistics().heap_size_limit * 0.9) / 2 ** 20);
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

/**
 * Issue 32 (docs/operations.md "Past one machine"): DATABASE_DIRECT_URL set and
 * unlike DATABASE_URL says DATABASE_URL is a transaction pooler, so named
 * prepared statements are off there unless DATABASE_PREPARED_STATEMENTS says otherwise.
 */
function databaseTopology(env: Env): Pick<Config, 'databaseDirectUrl' | 'preparedStatements' | 'readReplicas'> {
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const direct = url(env, 'DATABASE_DIRECT_URL', ['postgres:', 'postgresql:']);
  const readUrls = (env.DATABASE_READ_URLS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  readUrls.forEach((raw, i) => url({ [`DATABASE_READ_URLS[${i}]`]: raw }, `DATABASE_READ_URLS[${i}]`, ['postgres:', 'postgresql:']));
  // Without DATABASE_URL (the embedded database) there is no pooler and no replica: both are ignored.
  const pooled = databaseUrl !== null && direct !== null && direct !== databaseUrl;
  return {
    databaseDirectUrl: pooled ? direct : null,
    preparedStatements: flag(env, 'DATABASE_PREPARED_STATEMENTS', !pooled),
    readReplicas: {
      urls: databaseUrl ? readUrls : [],
      maxLagMs: integer(env, 'DATABASE_READ_MAX_LAG_MS', 5000, 10, 3_600_000),
      waitMs: integer(env, 'DATABASE_READ_WAIT_MS', 50, 0, 10_000),
      // Replicas are taken as PostgreSQL itself (or a session pooler): prepared unless said otherwise.
      prepared: flag(env, 'DATABASE_PREPARED_STATEMENTS', true),
    },
  };
}

/** The variables that hold couriers' base URLs (a courier's urlVariable must read so: couriers/catalog.ts). */
export const COURIER_URL_VARIABLE = /^COURIER_[A-Z0-9_]+_URL$/;

function courierUrls(env: Env): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const name of Object.keys(env).filter((n) => COURIER_URL_VARIABLE.test(n))) {
    const value = url(env, name, ['http:', 'https:']);
    if (value !== null) urls[name] = value;
  }
  return urls;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const production = env.NODE_ENV === 'production';
  const publicBaseUrl = (url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/$/, '');
  const adminToken = env.ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters long');
  }
  let encryptionKeys: SealingKey[] | null = null;
  if (env[KEYS_VARIABLE]) {
    try {
      encryptionKeys = parseKeys(env[KEYS_VARIABLE]);
    } catch (err) {
      throw new ConfigError(`${KEYS_VARIABLE} ${(err as Error).message} (e.g. ${KEYS_VARIABLE}=k1:$(openssl rand -base64 32))`);
    }
  }
  const deploySha = env.DEPLOY_SHA || null;
  if (deploySha !== null && !/^[0-9A-Za-z._-]+$/.test(deploySha)) {
    throw new ConfigError(`DEPLOY_SHA must be a revision id (letters, digits, . _ -), got "${deploySha}"`);
  }
  return {
    port,
    host,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    poolMax: integer(env, 'DB_POOL_MAX', defaultPoolSize(), 1, 1000),
    ...databaseTopology(env),
    dataDir: env.DATA_DIR || './data',
    publicBaseUrl,
    adminToken,
    encryptionKeys,
    deploySha,
    seedDemo: flag(env, 'SEED_DEMO', true),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    webhookAllowHosts: (env.WEBHOOK_ALLOW_HOSTS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    webhookSenderNice: integer(env, 'WEBHOOK_SENDER_NICE', 19, 0, 19),
    courierMode: oneOf(env, 'COURIER_MODE', ['simulator', 'live'] as const, production ? 'live' : 'simulator'),
    courierUrls: courierUrls(env),
    courierTimeoutMs: integer(env, 'COURIER_TIMEOUT_MS', 10_000, 100, 120_000),
    batchLeaseSec: integer(env, 'BATCH_LEASE_SEC', 15, 1, 600),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    rateLimits: {
      restPerMinute: integer(env, 'RATE_LIMIT_REST_PER_MINUTE', 300, 1, 100_000_000),
      mcpPerMinute: integer(env, 'RATE_LIMIT_MCP_PER_MINUTE', 120, 1, 100_000_000),
      authFailures: {
        points: integer(env, 'AUTH_FAILURES_PER_WINDOW', 1000, 1, 100_000_000),
        windowSec: integer(env, 'AUTH_FAILURES_WINDOW_SEC', 60, 1, 86_400),
      },
    },
    logLevel: env.LOG_LEVEL ? oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info') : null,
    logFormat: env.LOG_FORMAT ? oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, 'json') : null,
    production,
    inventoryEnabled: flag(env, 'FEATURE_INVENTORY', true),
    workers: flag(env, 'WORKERS', true),
    overload: {
      enabled: flag(env, 'OVERLOAD_SHEDDING', true),
      maxInFlight: integer(env, 'OVERLOAD_MAX_IN_FLIGHT', 512, 0, 1_000_000),
      // Embedded PGlite runs its queries on this event loop, so a delay there is the database working, not overload:
      // off by default (a CI machine running test files side by side saw a 1 s mean delay from queries alone).
      maxEventLoopDelayMs: integer(env, 'OVERLOAD_MAX_EVENT_LOOP_DELAY_MS', env.DATABASE_URL ? 1000 : 0, 0, 60_000),
      maxEventLoopUtilization: fraction(env, 'OVERLOAD_MAX_EVENT_LOOP_UTILIZATION', 0),
      maxHeapUsedBytes: integer(env, 'OVERLOAD_MAX_HEAP_MB', defaultMaxHeapMb(), 0, 1_000_000) * 2 ** 20,
      sampleIntervalMs: integer(env, 'OVERLOAD_SAMPLE_INTERVAL_MS', 500, 10, 60_000),
      retryAfterSec: integer(env, 'OVERLOAD_RETRY_AFTER_SEC', 2, 1, 3600),
    },
  };
}
