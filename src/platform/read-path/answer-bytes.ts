// The bytes of large JSON answers (issue 12): a page of 50 orders is ~60 kB on
// REST and ~130 kB on MCP (the page twice). A fresh buffer per answer is a
// fresh malloc that size every time: measured on tools/call list_orders, about
// one service process in four then ran all its life at twice the CPU per call
// (in the allocation, the escaping loop and the garbage collector), none of 20
// with buffers kept for reuse (bench/RESULTS-mcp-answer-bytes.md). So answers
// are written into buffers lent per answer and given back once the socket has
// written them.

/** Smaller answers are allocated: a small malloc is cheap. */
const SMALLEST_KEPT = 32 * 1024;
/** Above this an answer is rare enough to allocate (a batch of twenty long pages is ~5 MB). */
const LARGEST_KEPT = 8 * 1024 * 1024;
/** What the idle buffers may hold in all: enough for every connection of a busy instance to be mid-answer. */
const KEPT_BYTES = 32 * 1024 * 1024;

/**
 * One service's buffers kept for reuse (issue 43: each service owns its own,
 * so two services in one process neither share nor bound each other's).
 */
export class AnswerBufferPool {
  private readonly idle = new Map<number, Buffer[]>();
  private idleBytes = 0;
  /**
   * The whole buffers now lent out, by their memory: only these come back, each
   * once. Weak: one never given back (an answer cut short) is simply collected.
   */
  private readonly lent = new WeakMap<ArrayBufferLike, Buffer>();

  /** Room for an answer of `size` bytes; its first `size` bytes are the caller's until giveBack. */
  lend(size: number): Buffer {
    if (size < SMALLEST_KEPT || size > LARGEST_KEPT) return Buffer.allocUnsafe(size);
    // Powers of two: an answer's size varies a little from page to page, its class rarely.
    const capacity = 2 ** Math.ceil(Math.log2(size));
    const kept = this.idle.get(capacity)?.pop();
    if (kept) this.idleBytes -= capacity;
    const whole = kept ?? Buffer.allocUnsafeSlow(capacity);
    this.lent.set(whole.buffer, whole);
    return whole.subarray(0, size);
  }

  /** Gives back what lend lent (anything else is left to the garbage collector). */
  giveBack(bytes: Buffer): void {
    const whole = this.lent.get(bytes.buffer);
    if (!whole) return;
    this.lent.delete(bytes.buffer);
    if (this.idleBytes + whole.length > KEPT_BYTES) return;
    let kept = this.idle.get(whole.length);
    if (!kept) this.idle.set(whole.length, (kept = []));
    kept.push(whole);
    this.idleBytes += whole.length;
  }
}
