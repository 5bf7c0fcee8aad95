// The events a change emits (events.ts writes them to the outbox) and who
// reacts to them in the emitting transaction. Apart from events.ts so that the
// Db interface can carry its reactions without a circle: nothing here needs
// to know what a transaction is.

export const SUBSCRIBABLE_EVENTS = [
  'order.created',
  'order.updated',
  'order.status_changed',
  'order.paid',
  'shipment.created',
  'shipment.status_changed',
  'shipment.cancelled',
  'inventory.low_stock',
] as const;

export type EventName = (typeof SUBSCRIBABLE_EVENTS)[number] | 'test';

export interface EmittedEvent {
  id: string;
  event: EventName;
  account_id: string;
  api_version: string;
  created_at: string;
  data: Record<string, unknown>;
}

export type Reaction<Tx> = (tx: Tx, event: EmittedEvent) => Promise<unknown>;

/**
 * Who reacts to the events emitted on one database, run in the event's own
 * transaction `Tx` (webhook fan-out adds its delivery rows there). Each Db
 * owns one, carried by its every transaction; the composition root (app.ts)
 * subscribes, so reading it tells every consumer.
 */
export class EventReactions<Tx> {
  private readonly reactions: Array<Reaction<Tx>> = [];

  /** Subscribes `reaction`; returns the unsubscribe. */
  add(reaction: Reaction<Tx>): () => void {
    this.reactions.push(reaction);
    return () => {
      const at = this.reactions.indexOf(reaction);
      if (at >= 0) this.reactions.splice(at, 1);
    };
  }

  async run(tx: Tx, event: EmittedEvent): Promise<void> {
    for (const reaction of this.reactions) await reaction(tx, event);
  }
}
