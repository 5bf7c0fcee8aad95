// The long-lived pieces of one running service, built once in app.ts.
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import type { RateLimits } from './rate-limit.ts';
import type { KeyCache } from './key-cache.ts';
import type { Faults } from './auth.ts';
import type { Notifier } from '../notify/notifier.ts';
import type { DeliveryEngine } from '../modules/webhooks/engine.ts';
import type { Couriers } from '../couriers/registry.ts';

export interface Services {
  config: Config;
  db: Db;
  rateLimits: RateLimits;
  /** API keys this instance has seen (issue 12). */
  keys: KeyCache;
  faults: Faults;
  notifier: Notifier;
  deliveries: DeliveryEngine;
  couriers: Couriers;
  log: FastifyBaseLogger;
  /** This service's Prometheus registry (/metrics). */
  metrics: Registry;
  deploySha: string;
}
