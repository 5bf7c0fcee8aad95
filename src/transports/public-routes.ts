// Mounts the rooms' public routes (platform/operations/public-route.ts) on Fastify:
// no API key, the room's handler answers. Raw-body routes get their own
// scope so the exact bytes reach the handler.
import type { FastifyInstance } from 'fastify';
import type { PublicRoute } from '../platform/operations/public-route.ts';
import type { Services } from '../platform/services.ts';
import { registerPaths } from './http-paths.ts';

export function registerPublicRoutes(app: FastifyInstance, services: Services, routes: PublicRoute[]): void {
  for (const route of routes) {
    app.register(async (scope) => {
      if (route.rawBody) {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: route.bodyLimit }, (_request, body, done) => done(null, body));
      }
      if (route.documented) registerPaths(scope, [{ path: route.path, method: route.method }]);
      scope.route({
        method: route.method,
        url: route.path,
        ...(route.bodyLimit ? { bodyLimit: route.bodyLimit } : {}),
        handler: async (request, reply) => {
          const answer = await route.handler(services, {
            query: request.query as Record<string, unknown>,
            headers: request.headers,
            body: request.body,
          });
          return reply.code(answer.status).send(answer.body);
        },
      });
    });
  }
}
