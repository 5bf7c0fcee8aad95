// Where a newcomer lands: `/` sends a browser to the docs, and `/api/v1`
// answers a small index of the service's addresses (no key needed).
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Closed } from '../platform/contract/schema.ts';
import { EVENT_API_VERSION } from '../platform/db/outbox.ts';
import type { DescribedRoute } from './described-route.ts';
import { registerPaths } from './http-paths.ts';

const Link = (description: string) => Type.String({ format: 'uri', description });

export const apiIndexRoute: DescribedRoute = {
  name: 'api_index',
  method: 'GET',
  path: '/api/v1',
  summary: 'Index: where the docs, the OpenAPI document, the MCP endpoint and the health check are',
  description: "Needs no API key. The addresses are absolute, built from the service's public base URL.",
  tags: ['Service'],
  output: Closed({
    name: Type.String(),
    version: Type.String({ description: "Version of this API (the OpenAPI document's info.version)." }),
    webhook_api_version: Type.String({ description: 'The api_version webhook envelopes carry.' }),
    links: Closed({
      docs: Link('The API reference and guides (HTML).'),
      openapi: Link('The OpenAPI 3.1 document.'),
      mcp: Link('The MCP endpoint: JSON-RPC 2.0 over Streamable HTTP, POST only, the same API key.'),
      health: Link('200 {ok: true} once the service accepts requests.'),
    }),
  }),
  public: true,
  mcpTool: null,
};

export function registerApiIndex(app: FastifyInstance, publicBaseUrl: string): void {
  const at = (path: string) => new URL(path, publicBaseUrl).toString();
  const index = {
    name: 'Merx API',
    version: '1.0.0',
    webhook_api_version: EVENT_API_VERSION,
    links: { docs: at('/docs'), openapi: at('/api/v1/openapi.json'), mcp: at('/api/mcp'), health: at('/healthz') },
  };
  app.get('/api/v1', async () => index);
  app.get('/', async (_request, reply) => reply.redirect('/docs', 302));
  registerPaths(app, [{ path: '/api/v1', method: 'GET' }]);
}
