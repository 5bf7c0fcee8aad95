// Prometheus metrics at /metrics (DESIGN: prom-client): process metrics and
// one request histogram by route pattern, never by raw URL (ids would explode it).
// One registry per running service (tests start several in one process); the
// domain rooms add their own metrics to it (webhook deliveries, courier calls).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'merx_' });
  return registry;
}

export function registerMetrics(app: FastifyInstance, registry: Registry, authorise: (request: FastifyRequest) => Promise<void>): void {
  const requests = new Histogram({
    name: 'merx_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  // Each (method, route, status)'s series looked up once: prom-client hashes a labels object on every observe().
  const series = new Map<string, { observe(value: number): void }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    const name = `${request.method} ${route} ${reply.statusCode}`;
    let child = series.get(name);
    if (!child) series.set(name, (child = requests.labels({ method: request.method, route, status: String(reply.statusCode) })));
    child.observe(reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { onRequest: async (request) => authorise(request) }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
