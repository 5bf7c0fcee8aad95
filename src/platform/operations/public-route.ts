// Routes outside the API-key operations that a room declares and the
// transport layer mounts (transports/public-routes.ts): the webhook debug
// sink, couriers' status pushes. They take no API key; each checks what it
// needs itself (a subscription id, a courier's token).
import type { TObject, TSchema } from 'typebox';
import type { Services } from '../services.ts';

export interface PublicRequest {
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface PublicRoute {
  name: string;
  method: 'POST';
  path: string;
  summary: string;
  description: string;
  tags: string[];
  query?: TObject;
  output: TSchema;
  /** Listed in the public OpenAPI document. */
  documented: boolean;
  /** The exact body text whatever its content type (a receiver verifies those bytes), instead of parsed JSON. */
  rawBody?: boolean;
  bodyLimit?: number;
  handler(services: Services, request: PublicRequest): Promise<{ status: number; body: unknown }>;
}
