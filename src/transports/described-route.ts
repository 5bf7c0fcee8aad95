// What the OpenAPI documents (and their code samples, and the API index) are
// built from: an operation, an operator route or a public route, described.
import type { TObject, TSchema } from 'typebox';

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
  scope?: string | null;
  produces?: string;
  /** A streamed answer's media types (each documented as a stream of text). */
  streams?: string[];
  /** Needs no API key. */
  public?: boolean;
  /** The MCP tool that runs this operation; null for REST only. Left out of documents that have no MCP side. */
  mcpTool?: string | null;
  /** A deployment feature the operation needs (503 migration_pending while it is off). */
  feature?: { name: string };
  /** Scopes that admit a caller besides `scope`. */
  alsoAdmittedBy?: string[];
  /** A create: the path of the created resource, sent as Location. */
  location?: string;
  /** Headers a success may carry besides the common ones: name -> description. */
  answerHeaders?: Record<string, string>;
  /** EXTENSIONS 3: the answer's data is a versioned resource (ETag; If-None-Match on a read, If-Match on a write). */
  etag?: unknown;
  /** A read whose answer carries an ETag (of the resource if `etag`, else of its bytes) and honours If-None-Match with a 304. */
  cacheable?: boolean;
  /** EXTENSIONS 10: the read takes `fields`; `id` is the identifier a projected object always keeps. */
  fields?: { id: string };
  /** MCP annotations; a route that is not read-only takes the idempotency key header. */
  annotations?: { readOnlyHint: boolean };
}
