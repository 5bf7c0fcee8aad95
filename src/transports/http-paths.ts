// SPEC Errors and GAPS General: on a known path, OPTIONS answers 204 and any
// other method 405 with Allow, both before any key check.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../platform/contract/errors.ts';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function registerPaths(app: FastifyInstance, routes: Array<{ path: string; method: string }>): void {
  const byPath = new Map<string, Set<string>>();
  for (const { path, method } of routes) {
    if (!byPath.has(path)) byPath.set(path, new Set());
    byPath.get(path)!.add(method);
  }
  for (const [path, methods] of byPath) {
    const allow = [...methods, 'OPTIONS'].join(', ');
    app.route({
      method: 'OPTIONS',
      url: path,
      handler: async (_request, reply) => reply.code(204).header('Allow', allow).send(),
    });
    const others = ALL_METHODS.filter((m) => !methods.has(m));
    if (others.length === 0) continue;
    app.route({
      method: others,
      url: path,
      handler: async () => {
        throw new AppError('method_not_allowed', `use one of: ${allow}`, undefined, { headers: { Allow: allow } });
      },
    });
  }
}
