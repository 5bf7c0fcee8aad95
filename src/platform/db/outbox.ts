// The transactional outbox (DESIGN): emit() writes the event in the caller's
// transaction, so an event exists exactly when the change it describes does.
import crypto from 'node:crypto';
import type { Sql } from './db.ts';
import { noteEvent } from '../operations/request-trace.ts';
import type { EmittedEvent, EventName } from './event-reactions.ts';

/** SPEC Versioning 1: webhook envelopes carry a date-style version because they have no path. */
export const EVENT_API_VERSION = '2026-09-01';

export { SUBSCRIBABLE_EVENTS, EventReactions, type EmittedEvent, type EventName } from './event-reactions.ts';
export type EventSource = 'merchant' | 'api' | 'courier' | 'payment' | 'automation';

/**
 * The envelope of an `events` row (alias `e`) as PostgreSQL json, keys in SPEC's
 * order: what a webhook delivery carries and what the events feed lists.
 */
export function envelopeJson(alias = 'e'): string {
  return `json_build_object('id', ${alias}.id, 'event', ${alias}.event,
    'created_at', to_char(${alias}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'account_id', ${alias}.account_id, 'api_version', ${alias}.api_version, 'data', ${alias}.data)`;
}

/**
 * The same envelope as envelopeJson(), built from the event just written (no
 * read back): `data` is stored as json text, i.e. exactly JSON.stringify(data),
 * and `created_at` comes back from the INSERT, so envelopeText() of either is the same.
 */
export function envelopeOf(event: EmittedEvent): Record<string, unknown> {
  return {
    id: event.id,
    event: event.event,
    created_at: event.created_at,
    account_id: event.account_id,
    api_version: event.api_version,
    data: event.data,
  };
}

/** The body of a delivery: the envelope as read back from envelopeJson(), serialised. */
export function envelopeText(envelope: object): string {
  return JSON.stringify(envelope);
}

export async function emit(
  tx: Sql,
  accountId: string,
  event: EventName,
  data: Record<string, unknown>,
  options: { id?: string } = {},
): Promise<EmittedEvent> {
  const id = options.id ?? crypto.randomUUID();
  const { rows } = await tx.query<{ created_at: string }>(
    `INSERT INTO events (id, account_id, event, api_version, data) VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
    [id, accountId, event, EVENT_API_VERSION, JSON.stringify(data)],
  );
  // EXTENSIONS 7: the request log lists the events a request committed.
  noteEvent(tx, id);
  const emitted: EmittedEvent = { id, event, account_id: accountId, api_version: EVENT_API_VERSION, created_at: rows[0].created_at, data };
  await tx.reactions.run(tx, emitted);
  return emitted;
}
