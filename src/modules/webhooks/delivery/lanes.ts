// Lanes: each subscription has its own bounded number of attempts in flight
// and its own queue, so a subscriber that answers slowly (or not at all) only
// ever holds up its own deliveries, never another subscription's. A global
// ceiling bounds the whole instance (sockets, memory); when it is reached,
// lanes with work take turns as slots free up.

export const LANE_WIDTH = 32;
export const MAX_IN_FLIGHT = 512;

interface Lane<T> {
  active: number;
  queue: T[];
}

export class Lanes<T> {
  private lanes = new Map<string, Lane<T>>();
  /** Lanes with queued work and a free slot, waiting for the global ceiling. */
  private waiting: string[] = [];
  private active = 0;
  private queued = 0;
  private readonly run: (item: T) => Promise<void>;

  constructor(run: (item: T) => Promise<void>) {
    this.run = run;
  }

  get inFlight(): number {
    return this.active;
  }

  get backlog(): number {
    return this.queued;
  }

  push(laneKey: string, item: T): void {
    let lane = this.lanes.get(laneKey);
    if (!lane) {
      lane = { active: 0, queue: [] };
      this.lanes.set(laneKey, lane);
    }
    lane.queue.push(item);
    this.queued++;
    this.pump(laneKey, lane);
  }

  /** Drops everything queued and returns it (the rows stay pending in the database for the worker). */
  clear(): T[] {
    const dropped: T[] = [];
    for (const lane of this.lanes.values()) {
      dropped.push(...lane.queue);
      lane.queue = [];
    }
    this.queued = 0;
    this.waiting = [];
    return dropped;
  }

  private pump(laneKey: string, lane: Lane<T>): void {
    while (lane.active < LANE_WIDTH && lane.queue.length) {
      if (this.active >= MAX_IN_FLIGHT) {
        if (!this.waiting.includes(laneKey)) this.waiting.push(laneKey);
        return;
      }
      const item = lane.queue.shift()!;
      this.queued--;
      lane.active++;
      this.active++;
      void this.run(item)
        .catch(() => {})
        .finally(() => {
          lane.active--;
          this.active--;
          if (lane.active === 0 && lane.queue.length === 0) this.lanes.delete(laneKey);
          else this.pump(laneKey, lane);
          this.pumpWaiting();
        });
    }
  }

  private pumpWaiting(): void {
    while (this.active < MAX_IN_FLIGHT && this.waiting.length) {
      const key = this.waiting.shift()!;
      const lane = this.lanes.get(key);
      if (lane) this.pump(key, lane);
    }
  }
}
