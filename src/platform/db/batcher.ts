// Collects items added from many places and hands them to one function in
// batches: one database round trip for many claims or outcomes. A batch goes
// out on the next turn of the event loop, or as soon as a running flush ends
// when `parallel` flushes are already under way; so at low load an item waits
// for nothing, and under load the batches grow instead of the round trips.
// With `spacingMs`, a batch that is not full also waits until that long after
// the previous flush began: the batches grow with the load even when each
// statement is quick (an item arriving at an idle batcher still goes at once).

const ignore = () => {};

interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

export class Batcher<I, O> {
  private queue: Array<Pending<I, O>> = [];
  private running = 0;
  private scheduled = false;
  /** The timer of a batch waiting for the spacing. */
  private spaced: NodeJS.Timeout | null = null;
  private readonly flush: (items: I[]) => Promise<O[]>;
  private readonly maxBatch: number;
  private readonly parallel: number;
  private readonly spacingMs: number;
  private lastFlushAt = -Infinity;
  private idleWaiters: Array<() => void> = [];

  constructor(flush: (items: I[]) => Promise<O[]>, options: { maxBatch: number; parallel: number; spacingMs?: number }) {
    this.flush = flush;
    this.maxBatch = options.maxBatch;
    this.parallel = options.parallel;
    this.spacingMs = options.spacingMs ?? 0;
  }

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** add() for an item nobody waits on: no promise per item (the flush function handles its own failures). */
  enqueue(item: I): void {
    this.queue.push({ item, resolve: ignore, reject: ignore });
    this.schedule();
  }

  /** Resolves once every item added so far has been flushed (or failed). */
  drained(): Promise<void> {
    if (!this.queue.length && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  get size(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.running >= this.parallel || this.queue.length === 0) return;
    const wait = this.queue.length >= this.maxBatch ? 0 : this.lastFlushAt + this.spacingMs - performance.now();
    if (wait > 0) {
      this.spaced ??= setTimeout(() => this.go(), wait);
      return;
    }
    if (this.spaced) clearTimeout(this.spaced); // the batch filled up: no reason to wait any longer
    this.spaced = null;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.go());
  }

  private go(): void {
    if (this.spaced) clearTimeout(this.spaced);
    this.spaced = null;
    this.scheduled = false;
    this.run();
  }

  private run(): void {
    while (this.running < this.parallel && this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.running++;
      this.lastFlushAt = performance.now();
      this.flush(batch.map((p) => p.item))
        .then(
          (results) => batch.forEach((p, i) => p.resolve(results[i])),
          (err) => batch.forEach((p) => p.reject(err)),
        )
        .finally(() => {
          this.running--;
          this.schedule();
          if (!this.running && !this.queue.length) this.idleWaiters.splice(0).forEach((resolve) => resolve());
        });
    }
  }
}
