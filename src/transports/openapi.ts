// Registry -> OpenAPI 3.1. The public document is the contract (SPEC
// Versioning 4); the operator API has its own, built the same way.
import type { TObject, TSchema } from 'typebox';
import { ErrorBody } from '../platform/contract/schema.ts';
import { withComponentRefs } from './schema-refs.ts';
import { codeSamples } from './code-samples.ts';
import { withPublicText } from './public-text.ts';
import { responseSample } from './response-samples.ts';
import type { DescribedRoute } from './described-route.ts';

export type { DescribedRoute };
import { ApprovalAnswerBody } from '../platform/operations/agents-hook.ts';

export interface HeaderDoc {
  description: string;
  schema: object;
  /** Sent on every request (default) or on some only. */
  required?: boolean;
}

/** An outgoing request the service makes (OpenAPI 3.1 `webhooks`): its headers and JSON body. */
export interface DescribedWebhook {
  summary: string;
  description: string;
  headers: Record<string, HeaderDoc>;
  body: TSchema;
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
  /** Write operations take `request` and mark replayed answers with `replayed`. */
  idempotency?: { request: HeaderDoc & { name: string }; replayed: HeaderDoc & { name: string } };
  webhooks?: Record<string, DescribedWebhook>;
  /** Redoc `x-codeSamples` (curl and merx-client) on every operation: the public document, whose client is merx-client. */
  codeSamples?: boolean;
  /** EXTENSIONS 7: write operations take the approval header and may answer 202 with an approval. */
  approvals?: { header: HeaderDoc & { name: string }; accepted: string };
  /** Versioned resources (routes with `etag`): the headers and the 304 and 412 answers. */
  versioning?: {
    etag: HeaderDoc & { name: string };
    ifMatch: HeaderDoc & { name: string };
    ifNoneMatch: HeaderDoc & { name: string };
    notModified: string;
    preconditionFailed: string;
  };
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

const takesIdempotencyKey = (route: DescribedRoute) => route.annotations?.readOnlyHint === false;

/** The If-None-Match (read) or If-Match (write) header a versioned route takes. */
function conditionalHeader(route: DescribedRoute, info: DocumentInfo) {
  if (!info.versioning || !(route.etag || route.cacheable)) return undefined;
  return takesIdempotencyKey(route) ? info.versioning.ifMatch : info.versioning.ifNoneMatch;
}

function parameters(route: DescribedRoute, components: Record<string, unknown>, info: DocumentInfo) {
  const dryRunHeader = info.dryRunHeader;
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
  if (info.idempotency && takesIdempotencyKey(route)) {
    const { name, description, schema } = info.idempotency.request;
    list.push({ name, in: 'header', required: false, description, schema });
  }
  if (info.approvals && takesIdempotencyKey(route)) {
    const { name, description, schema } = info.approvals.header;
    list.push({ name, in: 'header', required: false, description, schema });
  }
  const conditional = conditionalHeader(route, info);
  if (conditional)
    list.push({ name: conditional.name, in: 'header', required: false, description: conditional.description, schema: conditional.schema });
  return list;
}

function scopeSentence(route: DescribedRoute): string {
  if (!route.alsoAdmittedBy?.length) return `Required scope: \`${route.scope}\`.`;
  const all = [route.scope, ...route.alsoAdmittedBy].map((s) => `\`${s}\``);
  return `Required scope: any of ${all.join(', ')} (a key with none is refused naming \`${route.scope}\`).`;
}

/** EXTENSIONS 10: what `fields` does to the answer, said where the answer's schema is. */
const projectionSentence = (id: string) =>
  `Success. With \`fields\`, each object in \`data\` carries only the named fields and its identifier \`${id}\`, in the schema's order: ` +
  'the required lists of the schema below do not apply to it (x-merx-fields), and the answer has no ETag.';

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before trying again (429; 503 unavailable).', schema: { type: 'integer' } },
};

const isWrite = (route: DescribedRoute) => (route.annotations ? route.annotations.readOnlyHint === false : route.method !== 'GET');

/** Whether a refusal is one this route gives for its own reasons (its input, its key, its rows, its courier, its feature). */
function refusalApplies(route: DescribedRoute, code: string): boolean {
  switch (code) {
    case '400':
      return !!(route.params || route.query || route.body);
    case '401':
    case '403':
      return !route.public;
    // Any route may be shed under load (429 or 503 with Retry-After; docs/operations.md, load shedding).
    case '429':
    case '503':
      return true;
    case '404':
      return !!route.params || (isWrite(route) && !!route.body);
    case '409':
      return isWrite(route);
    // Waybills and labels are the courier's work.
    case '502':
      return route.tags?.[0] === 'Shipments' && (isWrite(route) || (route.produces !== undefined && route.produces !== 'application/json'));
    default:
      return false;
  }
}

export function buildOpenApiDocument(info: DocumentInfo, routes: DescribedRoute[]) {
  const components: Record<string, unknown> = {};
  const errorSchema = withComponentRefs(ErrorBody, components, false);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const status = String(route.successStatus ?? 200);
    const headers =
      info.idempotency && takesIdempotencyKey(route)
        ? {
            ...info.commonHeaders,
            [info.idempotency.replayed.name]: { description: info.idempotency.replayed.description, schema: info.idempotency.replayed.schema },
          }
        : info.commonHeaders;
    const versioning = route.etag || route.cacheable ? info.versioning : undefined;
    const etagHeader = versioning ? { [versioning.etag.name]: { description: versioning.etag.description, schema: versioning.etag.schema } } : {};
    const output = withComponentRefs(route.output, components, true);
    const declared = Object.fromEntries(
      Object.entries(route.answerHeaders ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
    );
    const successHeaders = route.location
      ? {
          ...headers,
          ...declared,
          Location: { description: `Where the created resource is read: ${openApiPath(route.location)}.`, schema: { type: 'string' } },
        }
      : { ...headers, ...etagHeader, ...declared };
    // A recorded answer of the running service as the sample (issue 41), where the document shows samples.
    const example = info.codeSamples ? responseSample(route.name, status, info.serverUrl) : undefined;
    const responses: Record<string, unknown> = {
      [status]: {
        description: route.streams ? 'Success: a stream' : route.fields ? projectionSentence(route.fields.id) : 'Success',
        headers: successHeaders,
        content: Object.fromEntries(
          (route.streams ?? [route.produces ?? 'application/json']).map((media) => [
            media.split(';')[0],
            { schema: output, ...(example === undefined ? {} : { example }) },
          ]),
        ),
      },
    };
    if (route.dryRunOutput) {
      const preview = {
        description: 'Dry-run preview',
        content: { 'application/json': { schema: withComponentRefs(route.dryRunOutput, components, true) } },
      };
      if (status === '200') {
        responses['200'] = {
          description: 'Success, or the dry-run preview when the dry-run header is set',
          headers: successHeaders,
          content: {
            'application/json': {
              schema: { anyOf: [output, preview.content['application/json'].schema] },
              ...(example === undefined ? {} : { example }),
            },
          },
        };
      } else {
        responses['200'] = { ...preview, headers: { ...headers, ...etagHeader } };
      }
    }
    if (info.approvals && takesIdempotencyKey(route)) {
      const approval = withComponentRefs(ApprovalAnswerBody, components, true);
      const own = responses['202'] as
        { description: string; headers: Record<string, unknown>; content: { 'application/json': { schema: unknown } } } | undefined;
      // An operation whose own success is 202 (a recovery started): its answer, or an approval, both with a Location.
      responses['202'] = own
        ? {
            description: `${own.description}; or, ${info.approvals.accepted}`,
            headers: own.headers,
            content: {
              'application/json': { ...own.content['application/json'], schema: { anyOf: [own.content['application/json'].schema, approval] } },
            },
          }
        : {
            description: info.approvals.accepted,
            headers: { ...headers, Location: { description: 'Where the approval is read: /api/v1/approvals/{id}.', schema: { type: 'string' } } },
            content: { 'application/json': { schema: approval } },
          };
    }
    const rare: string[] = [];
    for (const [code, description] of Object.entries(info.errorStatuses)) {
      if (!refusalApplies(route, code)) {
        rare.push(`${code} ${description}`);
        continue;
      }
      const errorHeaders = code === '429' || code === '503' ? { ...headers, ...RETRY_AFTER } : headers;
      responses[code] = { description, headers: errorHeaders, content: { 'application/json': { schema: errorSchema } } };
    }
    // Issue 41: a simple read listed 15 statuses. The ones this route gives for its own reasons, and load shedding's
    // 429 and 503, are listed; the rest any request can meet (a wrong method, a slow or huge request) is one `default`.
    if (rare.length) {
      responses.default = {
        description: `Any other refusal, in the same shape: ${rare.join('; ')}.`,
        headers: { ...headers, ...RETRY_AFTER },
        content: { 'application/json': { schema: errorSchema } },
      };
    }
    if (versioning && takesIdempotencyKey(route)) {
      responses['412'] = {
        description: versioning.preconditionFailed,
        headers: { ...headers, ...etagHeader },
        content: { 'application/json': { schema: errorSchema } },
      };
    } else if (versioning) {
      responses['304'] = { description: versioning.notModified, headers: { ...headers, ...etagHeader } };
    }
    const facts = [
      route.scope ? scopeSentence(route) : route.scope === null ? 'Any valid key; no scope needed.' : '',
      route.mcpTool === undefined ? '' : route.mcpTool ? `MCP tool: \`${route.mcpTool}\`.` : 'No MCP tool: REST only.',
      route.feature ? `Needs the \`${route.feature.name}\` feature on this deployment (503 migration_pending while it is off).` : '',
    ].filter(Boolean);
    const operation: Record<string, unknown> = {
      operationId: route.name,
      summary: route.summary,
      description: facts.length ? `${route.description}\n\n${facts.join(' ')}` : route.description,
      tags: route.tags,
      parameters: parameters(route, components, info),
      responses,
    };
    // null: any valid key (EXTENSIONS 7: the request log, approvals).
    if (route.scope !== undefined) operation['x-required-scope'] = route.scope;
    if (route.fields) operation['x-merx-fields'] = { identifier: route.fields.id };
    if (route.alsoAdmittedBy?.length) operation['x-accepted-scopes'] = [route.scope, ...route.alsoAdmittedBy];
    if (route.mcpTool !== undefined) operation['x-mcp-tool'] = route.mcpTool;
    if (route.feature) operation['x-required-feature'] = route.feature.name;
    if (route.public) operation.security = [];
    if (info.codeSamples) operation['x-codeSamples'] = codeSamples(route, info.serverUrl);
    if (route.body) {
      operation.requestBody = { required: true, content: { 'application/json': { schema: withComponentRefs(route.body, components, true) } } };
    }
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation;
  }
  const webhooks = Object.fromEntries(
    Object.entries(info.webhooks ?? {}).map(([name, hook]) => [
      name,
      {
        post: {
          summary: hook.summary,
          description: hook.description,
          parameters: Object.entries(hook.headers).map(([header, doc]) => ({ name: header, in: 'header', required: true, ...doc })),
          requestBody: { required: true, content: { 'application/json': { schema: withComponentRefs(hook.body, components, false) } } },
          responses: { '2XX': { description: 'Received: answer within 10 seconds; anything else is a failed attempt.' } },
        },
      },
    ]),
  );
  return withPublicText({
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    security: [{ bearerAuth: [] }],
    paths,
    ...(info.webhooks ? { webhooks } : {}),
    components: {
      schemas: components,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    },
  });
}
