// Composition root: builds the Fastify app from the registries.
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import { AppError, databaseUnavailable, toAppError } from './platform/contract/errors.ts';
import { UNAVAILABLE_RETRY_AFTER_SEC } from './platform/db/health.ts';
import { answersWithEtag, fullDescription, type Operation } from './platform/operations/operation.ts';
import { registerOperations } from './transports/rest.ts';
import { registerMcp } from './transports/mcp.ts';
import { buildOpenApiDocument } from './transports/openapi.ts';
import { registerDocsSite } from './transports/docs-page.ts';
import { docsPages } from './transports/docs-document.ts';
import { docsSearch } from './transports/docs-search.ts';
import { loadGuides } from './transports/guides.ts';
import { apiIndexRoute, registerApiIndex } from './transports/api-index.ts';
import {
  API_DESCRIPTION,
  APPROVAL_HEADERS,
  COMMON_HEADERS,
  ERROR_STATUSES,
  IDEMPOTENCY_HEADERS,
  OPERATOR_ERROR_STATUSES,
  VERSIONING_HEADERS,
} from './transports/api-description.ts';
import { deliveryWebhooks } from './modules/webhooks/delivery/description.ts';
import { orderOperations } from './modules/orders/operations.ts';
import { webhookOperations } from './modules/webhooks/operations.ts';
import { productOperations } from './modules/products/operations.ts';
import { inventoryOperations } from './modules/inventory/operations.ts';
import { shipmentOperations } from './modules/shipments/operations.ts';
import { shipmentBatchOperations } from './modules/shipments/batch-operations.ts';
import { customerOperations } from './modules/customers/operations.ts';
import { bridgeOperations } from './modules/bridge/operations.ts';
import { eventOperations } from './modules/events/operations.ts';
import { agentOperations } from './modules/agents/operations.ts';
import { exportOperations } from './modules/exports/operations.ts';
import { courierPushRoutes } from './modules/shipments/status-sync.ts';
import { registerCourierSimulator } from './couriers/simulator/routes.ts';
import { sinkRoute } from './modules/webhooks/delivery/sink.ts';
import { fanOut } from './modules/webhooks/delivery/deliveries.ts';
import type { PublicRoute } from './platform/operations/public-route.ts';
import { registerPublicRoutes } from './transports/public-routes.ts';
import { OPERATOR_BASE, checkOperatorToken, registerAdminRoutes, type AdminRoute, type OperatorServices } from './operator/route.ts';
import { registerMetrics } from './platform/edge/metrics.ts';
import { accountRoutes } from './operator/accounts-routes.ts';
import { storefrontRoutes } from './operator/storefront-routes.ts';
import { outsideRoutes } from './operator/outside-routes.ts';
import { agentsRoutes } from './operator/agents-routes.ts';
import { connectedAppsRoutes } from './operator/connected-apps-routes.ts';
import { registerConsole } from './operator/console.ts';
import { registerOAuthServer } from './operator/oauth-server.ts';
import { consoleRoutes } from './operator/console-routes.ts';
import { clientErrorHandler, drainRefusedBody, frameworkErrorHandler } from './transports/client-error.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan, tooDeep } from './platform/contract/json-depth.ts';
import { pressureState, registerLoadShedding } from './platform/edge/overload.ts';
import { newRequestId } from './platform/operations/request-trace.ts';

/** Every public operation, in the order the docs list them. */
export const operations: Operation[] = [
  ...orderOperations,
  ...shipmentOperations,
  ...shipmentBatchOperations,
  ...productOperations,
  ...inventoryOperations,
  ...customerOperations,
  ...webhookOperations,
  ...eventOperations,
  ...bridgeOperations,
  ...agentOperations,
  ...exportOperations,
];
/** Routes outside the API-key operations (no key; each checks its own token or id). */
export const publicRoutes = (): PublicRoute[] => [sinkRoute, ...courierPushRoutes()];
export const adminRoutes: AdminRoute[] = [
  ...accountRoutes,
  ...agentsRoutes,
  ...connectedAppsRoutes,
  ...storefrontRoutes,
  ...outsideRoutes,
  ...consoleRoutes(operations),
];

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The API, MCP and the operator API read the database; /healthz, /metrics, the docs, the OpenAPI documents and the console's files do not. */
function needsDatabase(url: string): boolean {
  const path = url.split('?')[0];
  if (path.endsWith('/openapi.json') || path === '/api/v1' || path === '/api/v1/') return false;
  return path.startsWith('/api/') || path.startsWith('/admin/api/');
}

/**
 * Issue 38: while the primary is away, the API's requests still go on when
 * there are read replicas: a key this instance knows authenticates from
 * memory and a read runs on a replica, or waits a moment for one or for the
 * new primary (read-routing.ts); a write is refused 503 in the pipeline.
 * The operator API stays behind the gate (its reads are of the primary).
 */
function servedWithoutPrimary(url: string, services: OperatorServices): boolean {
  return (url.startsWith('/api/v1/') || url.startsWith('/api/mcp')) && services.reads !== undefined;
}

function errorReply(error: FastifyError | Error, bodyLimit: number): AppError {
  if (error instanceof AppError) return error;
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('payload_too_large', `the body exceeds ${bodyLimit} bytes`);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new AppError('validation_failed', 'the body must be JSON (Content-Type: application/json)');
  const status = (error as FastifyError).statusCode;
  if (status && status >= 400 && status < 500) return new AppError('validation_failed', 'the request could not be read');
  return toAppError(error);
}

export function publicOpenApi(serverUrl: string) {
  return buildOpenApiDocument(
    {
      title: 'Merx API',
      version: '1.0.0',
      description: API_DESCRIPTION,
      serverUrl,
      commonHeaders: COMMON_HEADERS,
      errorStatuses: ERROR_STATUSES,
      dryRunHeader: 'X-Merx-Dry-Run',
      idempotency: IDEMPOTENCY_HEADERS,
      versioning: VERSIONING_HEADERS,
      approvals: APPROVAL_HEADERS,
      webhooks: deliveryWebhooks,
      codeSamples: true,
    },
    [
      ...operations
        .filter((op) => op.rest !== false)
        .map((op) => ({
          ...op,
          description: fullDescription(op),
          cacheable: answersWithEtag(op),
          mcpTool: op.mcp === false ? (op.mcpVia ?? null) : op.name,
        })),
      ...publicRoutes()
        .filter((r) => r.documented)
        .map((r) => ({ ...r, public: true, mcpTool: null })),
      apiIndexRoute,
    ],
  );
}

export function operatorOpenApi(serverUrl: string) {
  return buildOpenApiDocument(
    {
      title: 'Merx operator API',
      version: '1.0.0',
      description:
        "For the people who run Merx: provisioning (accounts, keys, courier integrations), the merchant's admin and the storefront " +
        '(checkout, payments, order edits), the simulated outside world (couriers, jobs, the debug sink, faults), and what the operator ' +
        "console at /admin stands on (service facts, lists, running any public operation as the merchant's admin). " +
        'Authorization: Bearer <ADMIN_TOKEN> (printed by npm start). Not rate limited, except wrong tokens: past 1,000 a minute ' +
        '(AUTH_FAILURES_PER_WINDOW) from one address, that address gets 429 with Retry-After. Never reachable with an API key.',
      serverUrl,
      commonHeaders: { 'X-Deploy-SHA': COMMON_HEADERS['X-Deploy-SHA'] },
      errorStatuses: OPERATOR_ERROR_STATUSES,
    },
    adminRoutes.map((r) => ({ ...r, path: OPERATOR_BASE + r.path })),
  );
}

/**
 * Who reacts to the domain events written on this service's database, in the
 * emitting transaction: read this to know every consumer. Returns the unsubscribe.
 */
export function subscribeReactions(services: OperatorServices): () => void {
  const unsubscribe = [
    // Webhooks: one delivery row per active subscription to the event; this instance sends the first attempts.
    services.db.reactions.add((tx, event) => fanOut(tx, event, services.deliveries.committed)),
  ];
  return () => unsubscribe.forEach((u) => u());
}

/** `reactions: false` builds an app whose events nobody reacts to (tests of one room alone). */
export async function buildApp(services: OperatorServices, options: { reactions?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: services.log,
    bodyLimit: BODY_LIMIT_BYTES,
    // One line per request is written by the onResponse hook below instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: newRequestId,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 2048 },
    clientErrorHandler: clientErrorHandler(services.deploySha),
    // Issue 27: a client has REQUEST_TIMEOUT_MS (30 s) to send its whole request, headers and body; then 408 request_timeout
    // (client-error.ts) and the connection is closed. Node checks its connections once a second instead of every 30 s.
    requestTimeout: services.config.requestTimeoutMs,
    http: { requestTimeout: services.config.requestTimeoutMs, headersTimeout: services.config.requestTimeoutMs, connectionsCheckingInterval: 1000 },
    frameworkErrors: frameworkErrorHandler(services.deploySha),
  });

  // Node closes the idle keep-alive connections once, when closing begins; a request in flight then leaves its
  // connection open behind it until the client or the keep-alive timeout (72 s) ends it. Those are closed as they fall idle.
  app.addHook('preClose', (done) => {
    const closeIdle = setInterval(() => app.server.closeIdleConnections(), 100).unref();
    app.server.once('close', () => clearInterval(closeIdle));
    done();
  });

  // Our JSON parser: an empty body is "no body"; malformed JSON is a 400 in the contract's shape.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    // An unknown route is a 404 whatever its body holds (GAPS: before any other check).
    if (text.trim() === '' || request.routeOptions.url === undefined) return done(null, undefined);
    // Issue 27: refused on the raw text, before JSON.parse or any walk of the value.
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return done(tooDeep('the body'), undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AppError('validation_failed', 'the body is not valid JSON'), undefined);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Deploy-SHA', services.deploySha).header('X-Request-Id', request.id);
    // Issue 27: while the database is down, what needs it is answered 503 at once instead of waiting on a connection.
    if (services.db.health.isDown && needsDatabase(request.url) && !servedWithoutPrimary(request.url, services)) throw databaseUnavailable();
  });
  // Issue 27: right after the headers, so a shed request costs no other work (docs/operations.md, load shedding).
  await registerLoadShedding(app, services.config.overload);
  // One line per request: never the key or query values (they may hold personal data).
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        key: request.key?.keyPrefix,
        account: request.key?.accountId,
      },
      'request',
    );
  });

  app.setErrorHandler(async (error: Error, request, reply) => {
    const appError = errorReply(error, request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES);
    if (appError.code === 'payload_too_large') await drainRefusedBody(request.raw);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'request failed');
    return reply
      .code(appError.status)
      .headers(appError.headers)
      .type('application/json; charset=utf-8')
      .serializer(JSON.stringify)
      .send(appError.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`).toBody());
  });

  // OPERATOR_API: 200 {ok: true} once requests are accepted. With REDIS_URL, `redis` tells whether rate limits are shared.
  // While the database is unreachable: 503 {ok: false, down: ["database"], database: {...}} (issue 27).
  app.get('/healthz', async (_request, reply) => {
    const redis = services.rateLimits.redisState();
    const pressure = pressureState(app, services.config.overload);
    const replicas = services.reads?.states();
    // Issue 43: still ok while stored documents are rewritten (reads build them from the row meanwhile), but said.
    const backfilling = services.viewBackfill?.running() ? { stored_views: 'backfilling' } : {};
    const health = {
      ok: true,
      ...(redis === 'not_configured' ? {} : { redis }),
      ...(pressure ? { pressure } : {}),
      ...(replicas ? { replicas } : {}),
      ...backfilling,
    };
    const database = services.db.health.state();
    if (database.database === 'ok') return health;
    reply.code(503).header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SEC));
    return { ...health, ok: false, down: ['database'], database };
  });
  // Scraped with the operator token: metrics name routes and volumes, which are not public.
  registerMetrics(app, services.metrics, (request) => checkOperatorToken(request, services));
  const publicDoc = publicOpenApi(services.config.publicBaseUrl);
  app.get('/api/v1/openapi.json', async () => publicDoc);
  const operatorDoc = operatorOpenApi(services.config.publicBaseUrl);
  app.get(`${OPERATOR_BASE}/openapi.json`, async () => operatorDoc);
  const guides = loadGuides(services.config.publicBaseUrl);
  const apiPages = docsPages(publicDoc, operations, guides).map((page) => ({ ...page, specUrl: `${page.path}/openapi.json` }));
  registerDocsSite(app, {
    references: [...apiPages, { path: '/admin/docs', title: 'Merx operator API', specUrl: `${OPERATOR_BASE}/openapi.json` }],
    guides,
    search: docsSearch({ guides, publicDoc, operations, operatorDoc }),
  });
  registerApiIndex(app, services.config.publicBaseUrl);

  registerOperations(app, services, operations);
  registerMcp(app, services, operations);
  registerAdminRoutes(app, services, adminRoutes);
  registerPublicRoutes(app, services, publicRoutes());
  registerOAuthServer(app, services);
  // COURIER_MODE=live never mounts the simulator.
  if (services.courierSimulator) registerCourierSimulator(app, services.courierSimulator);
  registerConsole(app);
  if (options.reactions !== false) {
    const unsubscribe = subscribeReactions(services);
    app.addHook('onClose', async () => unsubscribe());
  }
  return app;
}
