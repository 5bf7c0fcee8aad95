// Collects items added from many places and hands them to one function in
// batches: one database round trip for many claims or outcomes. A batch goes
// out on the next turn of the event loop, or as soon as a running flush ends
// when `parallel` flushes are already under way; so at low load an item waits
// for nothing, and under load the batches grow instead of the round trips.

interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

export class Batcher<I, O> {
  private queue: Array<Pending<I, O>> = [];
  private running = 0;
  private scheduled = false;
  private readonly flush: (items: I[]) => Promise<O[]>;
  private readonly maxBatch: number;
  private readonly parallel: number;

  constructor(flush: (items: I[]) => Promise<O[]>, options: { maxBatch: number; parallel: number }) {
    this.flush = flush;
    this.maxBatch = options.maxBatch;
    this.parallel = options.parallel;
  }

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  get size(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.parallel || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.run();
    });
  }

  private run(): void {
    while (this.running < this.parallel && this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.running++;
      this.flush(batch.map((p) => p.item))
        .then(
          (results) => batch.forEach((p, i) => p.resolve(results[i])),
          (err) => batch.forEach((p) => p.reject(err)),
        )
        .finally(() => {
          this.running--;
          this.schedule();
        });
    }
  }
}
