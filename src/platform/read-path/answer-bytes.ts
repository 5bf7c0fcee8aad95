// The bytes of large JSON answers (issue 12): a page of 50 orders is ~60 kB on
// REST and ~130 kB on MCP (the page twice). A fresh buffer per answer is a
// fresh malloc that size every time: measured on tools/call list_orders, about
// one service process in four then ran all its life at twice the CPU per call
// (in the allocation, the escaping loop and the garbage collector), none of 20
// with pooled buffers (bench/RESULTS-mcp-answer-bytes.md). So answers are
// written into buffers borrowed from a pool per answer and released once the
// socket has written them.

/** Smaller answers are allocated: a small malloc is cheap. */
const SMALLEST_POOLED = 32 * 1024;
/** Above this an answer is rare enough to allocate (a batch of twenty long pages is ~5 MB). */
const LARGEST_POOLED = 8 * 1024 * 1024;
/** What the idle buffers may hold in all: enough for every connection of a busy instance to be mid-answer. */
const IDLE_BYTES_MAX = 32 * 1024 * 1024;

/**
 * One service's pool of answer buffers (issue 43: each service owns its own,
 * so two services in one process neither share nor bound each other's).
 */
export class AnswerBufferPool {
  private readonly idle = new Map<number, Buffer[]>();
  private idleBytes = 0;
  /**
   * The whole buffers now borrowed, by their memory: only these come back, each
   * once. Weak: one never released (an answer cut short) is simply collected.
   */
  private readonly borrowed = new WeakMap<ArrayBufferLike, Buffer>();

  /** Room for an answer of `size` bytes; its first `size` bytes are the caller's until release. */
  borrow(size: number): Buffer {
    if (size < SMALLEST_POOLED || size > LARGEST_POOLED) return Buffer.allocUnsafe(size);
    // Powers of two: an answer's size varies a little from page to page, its class rarely.
    const capacity = 2 ** Math.ceil(Math.log2(size));
    const pooled = this.idle.get(capacity)?.pop();
    if (pooled) this.idleBytes -= capacity;
    const whole = pooled ?? Buffer.allocUnsafeSlow(capacity);
    this.borrowed.set(whole.buffer, whole);
    return whole.subarray(0, size);
  }

  /** Returns what borrow gave to the pool (anything else is left to the garbage collector). */
  release(bytes: Buffer): void {
    const whole = this.borrowed.get(bytes.buffer);
    if (!whole) return;
    this.borrowed.delete(bytes.buffer);
    if (this.idleBytes + whole.length > IDLE_BYTES_MAX) return;
    let sameSize = this.idle.get(whole.length);
    if (!sameSize) this.idle.set(whole.length, (sameSize = []));
    sameSize.push(whole);
    this.idleBytes += whole.length;
  }
}
