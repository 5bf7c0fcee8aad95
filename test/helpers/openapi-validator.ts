// Validates what the service answers against the OpenAPI 3.1 document it
// publishes (SPEC Versioning 4: "every response validates against its
// schema"). Reusable by any suite:
//
//   const doc = (await http(url, 'GET', '/api/v1/openapi.json')).body;
//   assertResponseMatches(doc, 'GET', '/api/v1/orders/{id}', res);
//
// Schemas are compiled with Ajv's JSON Schema 2020-12 dialect (the one
// OpenAPI 3.1 uses); `#/components/schemas/X` references resolve against the
// document's own components.
import assert from 'node:assert/strict';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Ajv, ValidateFunction, ErrorObject } from 'ajv';
import { withoutRequired } from '../../src/platform/contract/fields.ts';

/** The 2020-12 flavour of Ajv (its instances have the core Ajv API). */
type Ajv2020 = Ajv;
const Ajv2020 = Ajv2020Module as unknown as new (options: object) => Ajv2020;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type OpenApiDoc = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, unknown>; [section: string]: unknown };
  [key: string]: unknown;
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const COMPONENTS_ID = 'https://openapi.test/components.json';
/** Keywords OpenAPI 3.1 adds to JSON Schema (Schema Object: fixed fields). */
const OPENAPI_KEYWORDS = ['discriminator', 'xml', 'externalDocs', 'example'];

// ---------------------------------------------------------------- $ref resolution

/** Resolves a local JSON pointer such as `#/components/schemas/Order`; throws when it does not resolve. */
export function resolveRef(doc: unknown, ref: string): any {
  if (!ref.startsWith('#')) throw new Error(`only local references are supported: ${ref}`);
  const pointer = ref.slice(1);
  if (pointer === '') return doc;
  if (!pointer.startsWith('/')) throw new Error(`malformed JSON pointer: ${ref}`);
  let node: any = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(token in node)) throw new Error(`unresolved reference ${ref} (at "${token}")`);
    node = node[token];
  }
  return node;
}

/** Follows a chain of Reference Objects ({$ref}) to the object they name. */
export function deref<T = any>(doc: unknown, node: any): T {
  const seen = new Set<string>();
  while (
    node &&
    typeof node === 'object' &&
    typeof node.$ref === 'string' &&
    Object.keys(node).filter((k) => k !== 'summary' && k !== 'description').length === 1
  ) {
    if (seen.has(node.$ref)) throw new Error(`reference cycle at ${node.$ref}`);
    seen.add(node.$ref);
    node = resolveRef(doc, node.$ref);
  }
  return node as T;
}

/** Every `$ref` string in the document, with where it was found. */
export function collectRefs(node: unknown, at = '#'): Array<{ ref: string; at: string }> {
  const found: Array<{ ref: string; at: string }> = [];
  const walk = (value: unknown, where: string) => {
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}/${i}`));
    if (!value || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      const here = `${where}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === '$ref' && typeof inner === 'string') found.push({ ref: inner, at: here });
      else walk(inner, here);
    }
  };
  walk(node, at);
  return found;
}

/** References that do not resolve inside the document (an empty list is the goal). */
export function unresolvedRefs(doc: unknown): string[] {
  const problems: string[] = [];
  for (const { ref, at } of collectRefs(doc)) {
    try {
      resolveRef(doc, ref);
    } catch (err) {
      problems.push(`${at}: ${(err as Error).message}`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------- schemas

/** Rewrites document-local schema refs so Ajv resolves them against the registered components. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$ref' && typeof inner === 'string') {
      const match = /^#\/components\/schemas\/(.+)$/.exec(inner);
      if (!match) throw new Error(`schema reference outside components.schemas: ${inner}`);
      out.$ref = `${COMPONENTS_ID}#/$defs/${match[1]}`;
    } else {
      out[key] = rewriteRefs(inner);
    }
  }
  return out;
}

interface Compiled {
  ajv: Ajv2020;
  cache: Map<string, ValidateFunction>;
}
const compiledDocs = new WeakMap<object, Compiled>();
/** The same document with no required lists: what an answer projected by `fields` is held to (x-merx-fields). */
const projectedDocs = new WeakMap<object, OpenApiDoc>();

/** An Ajv 2020-12 instance that knows the document's components.schemas. */
export function ajvFor(doc: OpenApiDoc): Ajv2020 {
  return compiled(doc).ajv;
}

/**
 * EXTENSIONS 10: an operation marked `x-merx-fields` answers a request with
 * `fields` with objects holding only the named fields and their identifier;
 * its success response says the schema's required lists do not apply then.
 * Such an answer is validated against the document with every required list
 * lifted (types, enums and closed objects still hold); the identifier and the
 * exact field list are the tests' own assertions.
 */
export function projectedDocument(doc: OpenApiDoc): OpenApiDoc {
  let projected = projectedDocs.get(doc);
  if (!projected) projectedDocs.set(doc, (projected = withoutRequired(doc) as OpenApiDoc));
  return projected;
}

function compiled(doc: OpenApiDoc): Compiled {
  let entry = compiledDocs.get(doc);
  if (!entry) {
    const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true, validateFormats: true });
    addFormats(ajv);
    // The service's own format for strict ISO 8601 query dates (SPEC Errors); only its pattern is checked here.
    ajv.addFormat('strict-date', true);
    for (const keyword of OPENAPI_KEYWORDS)
      ajv.addKeyword({ keyword, schemaType: ['object', 'string', 'number', 'boolean', 'array', 'null'] as never });
    ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components?.schemas ?? {}) });
    entry = { ajv, cache: new Map() };
    compiledDocs.set(doc, entry);
  }
  return entry;
}

/** Compiles any schema of the document (with its refs resolved); throws when it is not valid JSON Schema 2020-12. */
export function compileSchema(doc: OpenApiDoc, schema: unknown, cacheKey?: string): ValidateFunction {
  const entry = compiled(doc);
  if (cacheKey && entry.cache.has(cacheKey)) return entry.cache.get(cacheKey)!;
  const validate = entry.ajv.compile(rewriteRefs(schema) as object);
  if (cacheKey) entry.cache.set(cacheKey, validate);
  return validate;
}

// ---------------------------------------------------------------- paths and responses

/** The document's path template that a concrete path matches (`/api/v1/orders/abc` -> `/api/v1/orders/{id}`). */
export function findPathTemplate(doc: OpenApiDoc, concretePath: string): string | undefined {
  const path = concretePath.split('?')[0];
  if (doc.paths[path]) return path;
  const segments = path.split('/');
  const candidates = Object.keys(doc.paths).filter((template) => {
    const parts = template.split('/');
    return parts.length === segments.length && parts.every((p, i) => /^\{[^}]+\}$/.test(p) || p === segments[i]);
  });
  // Prefer the most literal template (fewest parameters), as OpenAPI says concrete paths win.
  candidates.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  return candidates[0];
}

/**
 * The Response Object the document gives for (path, method, status). A
 * method the path does not document (the 405 case) falls back to the same
 * status under any documented method of that path.
 */
export function findResponse(doc: OpenApiDoc, method: string, pathTemplate: string, status: number): { response: any; where: string } | undefined {
  const item = doc.paths[pathTemplate];
  if (!item) return undefined;
  const lookup = (m: string) => {
    const operation = item[m];
    if (!operation?.responses) return undefined;
    const responses = operation.responses;
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    return key ? { response: deref(doc, responses[key]), where: `${m.toUpperCase()} ${pathTemplate} ${key}` } : undefined;
  };
  const direct = lookup(method.toLowerCase());
  if (direct || item[method.toLowerCase()]) return direct;
  for (const m of HTTP_METHODS) {
    const found = lookup(m);
    if (found) return found;
  }
  return undefined;
}

export interface ValidationOutcome {
  valid: boolean;
  errors: string[];
  /** Where in the document the schema came from, e.g. `GET /api/v1/orders/{id} 404`. */
  where?: string;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)} [schema ${e.schemaPath}]`);
}

/**
 * Validates one response body against the document. `pathTemplate` may be a
 * template (`/api/v1/orders/{id}`) or a concrete path. A status the document
 * does not list for that operation is itself a failure.
 */
export function validateResponse(
  doc: OpenApiDoc,
  method: string,
  pathTemplate: string,
  status: number,
  body: unknown,
  contentType = 'application/json',
): ValidationOutcome {
  const template = doc.paths[pathTemplate] ? pathTemplate : findPathTemplate(doc, pathTemplate);
  if (!template) return { valid: false, errors: [`path ${pathTemplate} is not in the document`] };
  const found = findResponse(doc, method, template, status);
  if (!found) return { valid: false, errors: [`${method.toUpperCase()} ${template} does not document status ${status}`] };
  const media = contentType.split(';')[0].trim().toLowerCase();
  const content = found.response.content as Record<string, { schema?: unknown }> | undefined;
  if (!content || Object.keys(content).length === 0) {
    const empty = body === undefined || body === null || body === '';
    return { valid: empty, errors: empty ? [] : [`${found.where} documents no body, got one`], where: found.where };
  }
  const mediaEntry = content[media] ?? content[`${media.split('/')[0]}/*`] ?? content['*/*'];
  if (!mediaEntry)
    return { valid: false, errors: [`${found.where} documents no ${media} body (has ${Object.keys(content).join(', ')})`], where: found.where };
  if (mediaEntry.schema === undefined) return { valid: true, errors: [], where: found.where };
  // Binary media (a PDF label) is checked by its documented type only; JSON Schema describes JSON.
  if (!/[/+]json$/.test(media)) return { valid: true, errors: [], where: found.where };
  const validate = compileSchema(doc, mediaEntry.schema, `${found.where} ${media}`);
  const valid = validate(body);
  return { valid, errors: valid ? [] : formatErrors(validate.errors), where: found.where };
}

/** Asserts that an HTTP answer (from the harness's http()) matches the document; `projected`: the request carried `fields`. */
export function assertResponseMatches(
  doc: OpenApiDoc,
  method: string,
  pathTemplateOrPath: string,
  res: { status: number; headers: Headers; body: unknown; text: string },
  options: { projected?: boolean } = {},
): void {
  const contentType = res.headers.get('content-type') ?? 'application/json';
  const body = res.text === '' ? undefined : res.body;
  const outcome = validateResponse(
    options.projected ? projectedFor(doc, method, pathTemplateOrPath) : doc,
    method,
    pathTemplateOrPath,
    res.status,
    body,
    contentType,
  );
  assert.ok(
    outcome.valid,
    `${method} ${pathTemplateOrPath} -> ${res.status} does not match ${outcome.where ?? 'the document'}:\n  ${outcome.errors.join('\n  ')}\nbody: ${res.text.slice(0, 2000)}`,
  );
}

/** The projected document, for an operation that documents `fields` (x-merx-fields); any other operation is not allowed to project. */
function projectedFor(doc: OpenApiDoc, method: string, pathTemplateOrPath: string): OpenApiDoc {
  const template = doc.paths[pathTemplateOrPath] ? pathTemplateOrPath : findPathTemplate(doc, pathTemplateOrPath);
  const operation = template ? doc.paths[template][method.toLowerCase()] : undefined;
  assert.ok(operation?.['x-merx-fields'], `${method} ${pathTemplateOrPath} does not document fields (x-merx-fields)`);
  return projectedDocument(doc);
}
