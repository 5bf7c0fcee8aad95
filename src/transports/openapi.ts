// Registry -> OpenAPI 3.1. The public document is the contract (SPEC
// Versioning 4); the operator API has its own, built the same way.
import type { TObject, TSchema } from 'typebox';
import { ErrorBody } from '../platform/schema.ts';
import { withComponentRefs } from './schema-refs.ts';

export interface DescribedRoute {
  name: string;
  method: string;
  path: string;
  summary: string;
  description: string;
  tags: string[];
  params?: TObject;
  query?: TObject;
  body?: TObject;
  output: TSchema;
  dryRunOutput?: TSchema;
  successStatus?: number;
  scope?: string;
  produces?: string;
  /** Needs no API key. */
  public?: boolean;
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  /** Response headers every answer carries. */
  commonHeaders: Record<string, { description: string; schema: object }>;
  errorStatuses: Record<string, string>;
  dryRunHeader?: string;
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function parameters(route: DescribedRoute, components: Record<string, unknown>, dryRunHeader?: string) {
  const list: object[] = [];
  const add = (part: TObject | undefined, where: 'path' | 'query') => {
    if (!part) return;
    const required = new Set((part.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries(part.properties)) {
      const { description, ...rest } = schema as Record<string, unknown>;
      list.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: withComponentRefs(rest, components, true),
      });
    }
  };
  add(route.params, 'path');
  add(route.query, 'query');
  if (route.dryRunOutput && dryRunHeader) {
    list.push({
      name: dryRunHeader,
      in: 'header',
      required: false,
      description: '1, true or yes: validate and preview without writing anything or calling a courier; the answer is the preview shape (200).',
      schema: { type: 'string', enum: ['1', 'true', 'yes'] },
    });
  }
  return list;
}

export function buildOpenApiDocument(info: DocumentInfo, routes: DescribedRoute[]) {
  const components: Record<string, unknown> = {};
  const errorSchema = withComponentRefs(ErrorBody, components, false);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const status = String(route.successStatus ?? 200);
    const output = withComponentRefs(route.output, components, true);
    const responses: Record<string, unknown> = {
      [status]: { description: 'Success', headers: info.commonHeaders, content: { [route.produces ?? 'application/json']: { schema: output } } },
    };
    if (route.dryRunOutput) {
      const preview = { description: 'Dry-run preview', content: { 'application/json': { schema: withComponentRefs(route.dryRunOutput, components, true) } } };
      if (status === '200') {
        responses['200'] = {
          description: 'Success, or the dry-run preview when the dry-run header is set',
          headers: info.commonHeaders,
          content: { 'application/json': { schema: { anyOf: [output, (preview.content['application/json'] as { schema: unknown }).schema] } } },
        };
      } else {
        responses['200'] = { ...preview, headers: info.commonHeaders };
      }
    }
    for (const [code, description] of Object.entries(info.errorStatuses)) {
      responses[code] = { description, headers: info.commonHeaders, content: { 'application/json': { schema: errorSchema } } };
    }
    const operation: Record<string, unknown> = {
      operationId: route.name,
      summary: route.summary,
      description: route.scope ? `${route.description}\n\nRequired scope: \`${route.scope}\`.` : route.description,
      tags: route.tags,
      parameters: parameters(route, components, info.dryRunHeader),
      responses,
    };
    if (route.scope) operation['x-required-scope'] = route.scope;
    if (route.public) operation.security = [];
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: withComponentRefs(route.body, components, true) } } };
    }
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    },
  };
}
