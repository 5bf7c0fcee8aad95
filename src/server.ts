// Starts one service instance: db, migrations, app, listening socket.
// Used by main.ts, the CLI and the black-box tests.
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { onDirectSession, openDb, replicaDb } from './platform/db/open-db.ts';
import type { Db } from './platform/db/db.ts';
import { ReadRouter } from './platform/db/read-routing.ts';
import { ReplicaSet } from './platform/db/read-replicas.ts';
import { createLogger } from './platform/edge/logger.ts';
import { migrateDatabase, views } from './views.ts';
import { startBackfill, type BackgroundBackfill, AnswerBufferPool, DocumentCache } from './platform/read-path/index.ts';
import { createRateLimits } from './platform/edge/rate-limit.ts';
import { KeyCache } from './platform/edge/key-cache.ts';
import { markKeyUsed } from './modules/accounts/service.ts';
import { resolveDeploySha } from './platform/edge/deploy-sha.ts';
import { createNotifier } from './notify/notifier.ts';
import { resolveAdminToken, type OperatorToken } from './operator/admin-token.ts';
import { openSecretsAtRest } from './platform/edge/sealed-columns.ts';
import { loadCursorSeal } from './platform/contract/cursor-seal.ts';
import { agentsHook } from './modules/agents/hook.ts';
import type { OperatorServices } from './operator/route.ts';
import { buildApp } from './app.ts';
import { DeliveryEngine } from './modules/webhooks/delivery/engine.ts';
import { BatchRunner } from './modules/shipments/batch-runner.ts';
import { createMetricsRegistry } from './platform/edge/metrics.ts';
import { startSchedules } from './workers/schedule.ts';
import { createCourierAdapters } from './couriers/adapters.ts';
import { courierCallMetrics } from './couriers/call-metrics.ts';
import { simulatorStandIn } from './couriers/simulator/routes.ts';
import { SIMULATED_COURIERS } from './couriers/simulator/simulated-couriers.ts';
import { SimulatorState } from './couriers/simulator/state.ts';
import { openSimulatorStore } from './couriers/simulator/open-store.ts';
import { Keyring } from './platform/edge/secret-box.ts';

export interface RunningService {
  app: FastifyInstance;
  db: Db;
  url: string;
  /** Where the operator token comes from, and the generated one to show (issue 27: never one from ADMIN_TOKEN). */
  adminToken: OperatorToken;
  services: OperatorServices;
  close(): Promise<void>;
}

/** `reactions: false`: nobody reacts to domain events (see app.ts subscribeReactions); tests of one room use it. */
export async function startService(config: Config, options: { pgliteTemplate?: Blob; reactions?: boolean } = {}): Promise<RunningService> {
  const log = createLogger(config);
  // Issue 43: what this service owns, carried by its Db and every transaction of it; another service in this process has its own.
  const db = await openDb({ ...config, pgliteTemplate: options.pgliteTemplate, documentCache: new DocumentCache(), keyring: new Keyring() });
  db.health.setLog(log);
  let keys: KeyCache | undefined;
  let backfill: BackgroundBackfill | undefined;
  let reads: ReadRouter | null = null;
  let simulatorStore: Awaited<ReturnType<typeof openSimulatorStore>> | null = null;
  try {
    await onDirectSession(db, config, (direct) => migrateDatabase(direct, log));
    await openSecretsAtRest(db, config, { warn: (message) => log.warn(message) });
    const admin = await resolveAdminToken(db, config.adminToken, config.dataDir);
    const cursors = await loadCursorSeal(db);
    const rateLimits = createRateLimits(config.redisUrl, config.rateLimits, log);
    await rateLimits.settled();
    const notifier = createNotifier(config.smtpUrl, log);
    const metrics = createMetricsRegistry();
    const faults = config.production ? undefined : { lookupFails: false, failNextShipmentCommit: false, lateNextMeteredStart: false };
    const deliveries = new DeliveryEngine({
      db,
      faults,
      notifier,
      log,
      policy: { publicBaseUrl: config.publicBaseUrl, allowHosts: config.webhookAllowHosts },
      metrics,
      senderNice: config.webhookSenderNice,
    });
    // The simulator is one more courier endpoint: this service's adapters reach it over HTTP like any other.
    simulatorStore = config.courierMode === 'simulator' ? await openSimulatorStore(db, config) : null;
    const courierSimulator = simulatorStore && new SimulatorState(SIMULATED_COURIERS, simulatorStore.store);
    const couriers = createCourierAdapters(config, {
      report: courierCallMetrics(metrics),
      standIn: courierSimulator && simulatorStandIn(courierSimulator),
    });
    reads = await openReadRouter(db, config, log);
    reads?.registerMetrics(metrics);
    keys = new KeyCache(db, { failures: rateLimits.authFailures, markUsed: (keyId) => markKeyUsed(db, keyId) });
    await keys.start();
    const services: OperatorServices = {
      config,
      db,
      rateLimits,
      keys,
      ...(faults ? { faults } : {}),
      notifier,
      deliveries,
      batches: new BatchRunner(),
      couriers,
      courierSimulator,
      log,
      metrics,
      deploySha: resolveDeploySha(config.deploySha),
      cursors,
      answerBuffers: new AnswerBufferPool(),
      agents: agentsHook(db, log),
      ...(reads ? { reads } : {}),
      adminTokenSha256: admin.sha256,
    };
    const app = await buildApp(services, { reactions: options.reactions });
    await app.listen({ port: config.port, host: config.host });
    // Issue 43: rows an older view declaration wrote are rewritten while the instance serves; reads build them from the row meanwhile.
    services.viewBackfill = backfill = startBackfill(db, views, log);
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    await deliveries.start({ self: { host: config.host, port }, worker: config.workers });
    // In simulator mode the couriers live in this process: the adapters and the push URL use the real listening address.
    if (courierSimulator) couriers.setSelfOrigin(`http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
    const stopSchedules = config.workers ? startSchedules(services) : () => {};
    // EXTENSIONS 8: batches run wherever the workers run; every such instance shares every batch.
    if (config.workers) await services.batches.start(services);
    return {
      app,
      db,
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
      adminToken: admin,
      services,
      async close() {
        stopSchedules();
        await services.viewBackfill?.stop();
        await services.batches.stop();
        await app.close();
        await services.agents.flushed();
        await deliveries.stop();
        await rateLimits.close();
        await keys!.stop();
        await reads?.close();
        await simulatorStore?.close();
        await db.close();
      },
    };
  } catch (err) {
    await backfill?.stop();
    await keys?.stop().catch(() => {});
    await reads?.close().catch(() => {});
    await simulatorStore?.close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}

/** Issue 32: DATABASE_READ_URLS watched and routed to (read-routing.ts), or null without replicas. */
async function openReadRouter(primary: Db, config: Config, log: ReturnType<typeof createLogger>): Promise<ReadRouter | null> {
  const { urls, maxLagMs, waitMs, prepared } = config.readReplicas;
  if (urls.length === 0 || primary.kind !== 'postgres') return null;
  const replicas = new ReplicaSet(
    primary,
    urls.map((url) => replicaDb(url, config.poolMax, { prepared }, primary)),
    { maxLagMs, log },
  );
  await replicas.start();
  return new ReadRouter(primary, replicas, { waitMs, log });
}
