// The long-lived pieces of one running service, built once in server.ts.
// The platform lists its own plumbing here and imports no room: a room or
// adapter that offers handlers a long-lived piece adds it by declaration
// merging (`declare module '.../platform/services.ts'`), next to its code.
// So does the agents hook (`agents`: approvals and the request log), next to
// its interface in operations/agents-hook.ts; the agents room implements it.
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Db } from './db/db.ts';
import type { RateLimits } from './edge/rate-limit.ts';
import type { KeyCache } from './edge/key-cache.ts';
import type { Faults } from './edge/auth.ts';
import type { CursorSeal } from './contract/cursor-seal.ts';
import type { ReadRouter } from './db/read-routing.ts';
import type { BackgroundBackfill } from './read-path/view-upkeep.ts';
import type { AnswerBufferPool } from './read-path/answer-bytes.ts';

export interface Services {
  config: Config;
  db: Db;
  rateLimits: RateLimits;
  /** API keys this instance has seen (issue 12). */
  keys: KeyCache;
  /** The operator's forced failures (OPERATOR_API faults); absent in production, where nothing can force one. */
  faults?: Faults;
  log: FastifyBaseLogger;
  /** This service's Prometheus registry (/metrics). */
  metrics: Registry;
  deploySha: string;
  /** Seals and opens list cursors with the key every instance of this database shares (issue 27). */
  cursors: CursorSeal;
  /** Issue 12: the buffers large answers are written into, borrowed per answer from this pool and reused (answer-bytes.ts). */
  answerBuffers: AnswerBufferPool;
  /** Issue 32: with DATABASE_READ_URLS, where operations' reads run (execute.ts); absent, all on `db`. */
  reads?: ReadRouter;
  /** Issue 43: the stored views' backfill, begun once the instance listens (/healthz shows it while it runs). */
  viewBackfill?: BackgroundBackfill;
}
