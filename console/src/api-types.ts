// The types of what the console sends and gets, looked up in the types
// generated from the two OpenAPI documents: the public operations' in
// merx-client, the operator API's in ./operator-schema (written by
// console/scripts/operator-schema.ts). Nothing here restates a field.
import type { components as PublicComponents, operations as PublicOperations } from 'merx-client';
import type { components as OperatorComponents, paths as OperatorPaths } from './operator-schema';

type JsonOf<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never;

// The operator API (/admin/api): a path as its document spells it, with {placeholders}.

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The operator API's paths that take `method`. */
export type OperatorPath<M extends Method> = {
  [P in keyof OperatorPaths]: OperatorPaths[P] extends Record<Lowercase<M>, object> ? P : never;
}[keyof OperatorPaths];

type OperatorRoute<M extends Method, P extends OperatorPath<M>> = OperatorPaths[P][Lowercase<M>];
type RouteParameters<Route, Where extends 'path' | 'query'> = Route extends { parameters: { [W in Where]?: infer Given } }
  ? Exclude<Given, undefined>
  : never;
type Body<Route> = Route extends { requestBody?: infer Request } ? JsonOf<Request> : never;

/**
 * What a call to the route takes besides its path: the values of the path's
 * {placeholders} and of the query (named as the route names them; given as
 * the text the console holds, which the service validates; empty ones are
 * left out of the query) and the JSON body.
 */
export type OperatorInput<M extends Method, P extends OperatorPath<M>> = ([RouteParameters<OperatorRoute<M, P>, 'path'>] extends [never]
  ? { path?: never }
  : { path: { [Name in keyof RouteParameters<OperatorRoute<M, P>, 'path'>]: string } }) &
  ([RouteParameters<OperatorRoute<M, P>, 'query'>] extends [never]
    ? { query?: never }
    : { query?: { [Name in keyof RouteParameters<OperatorRoute<M, P>, 'query'>]?: string | number } }) &
  ([Body<OperatorRoute<M, P>>] extends [never] ? { body?: never } : { body: Body<OperatorRoute<M, P>> });

/** The JSON a route answers with success. */
export type OperatorAnswer<M extends Method, P extends OperatorPath<M>> =
  OperatorRoute<M, P> extends { responses: infer Responses } ? JsonOf<Responses[200 & keyof Responses] | Responses[201 & keyof Responses]> : never;

type OperatorSchemas = OperatorComponents['schemas'];
export type Account = OperatorSchemas['Account'];
export type Key = OperatorSchemas['Key'];
export type Approval = OperatorSchemas['OperatorApproval'];
export type ServiceInfo = OperatorAnswer<'GET', '/admin/api/info'>['data'];
export type SinkCapture = OperatorAnswer<'GET', '/admin/api/webhooks/{id}/sink'>['data'][number];

/** A keyset-paged list answer, public or operator. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

// The public operations, as POST /admin/api/accounts/{id}/operations/{name} runs them.

export type { Order, Shipment, StockItem, StockMovement, WebhookSubscription, WebhookDelivery } from 'merx-client';
export type HealthWindow = PublicComponents['schemas']['WebhookHealthWindow'];

/** The public operations the document describes (MCP-only ones have no REST answer to type). */
export type OperationName = keyof PublicOperations;
type OperationResponses<N extends OperationName> = PublicOperations[N]['responses'];
/** The 200 answer: a read's result, or a write's dry-run preview (either, for a write whose success is 200 too). */
type Preview<N extends OperationName> = JsonOf<OperationResponses<N>[200 & keyof OperationResponses<N>]>;
/** The success a write declares (201, or its own 202 beside the approval the operator never gets: it writes directly), else 200. */
type Result<N extends OperationName> = [JsonOf<OperationResponses<N>[201 & keyof OperationResponses<N>]>] extends [never]
  ? [OwnAccepted<N>] extends [never]
    ? Preview<N>
    : OwnAccepted<N>
  : JsonOf<OperationResponses<N>[201 & keyof OperationResponses<N>]>;
type OwnAccepted<N extends OperationName> = Exclude<
  JsonOf<OperationResponses<N>[202 & keyof OperationResponses<N>]>,
  { data: PublicComponents['schemas']['Approval'] }
>;

type DryRun<Arguments> = Arguments extends { dry_run?: infer Asked } ? Asked : undefined;

/**
 * The operation's REST body for these arguments: the preview when they ask
 * for a dry run, the result when they do not, either when it depends; plus
 * `_meta`, which run_operation adds as MCP has it (next_cursor of a page, a
 * versioned resource's etag).
 */
export type OperationAnswer<N extends OperationName, Arguments> = (DryRun<Arguments> extends true
  ? Preview<N>
  : true extends DryRun<Arguments>
    ? Result<N> | Preview<N>
    : Result<N>) & { _meta?: { next_cursor?: string; etag?: string } };
