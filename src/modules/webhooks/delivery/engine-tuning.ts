// The delivery engine's batch sizes and timings (engine.ts), apart so that each
// says why it has its value; measured effects are in bench/RESULTS-webhooks*.md.
import { ATTEMPT_TIMEOUT_MS } from './https-sender.ts';

export const WORKER_BATCH = 100;
/** Worker attempts in flight at once (each pass); more are claimed as these finish. */
export const WORKER_IN_FLIGHT = 256;
export const CLAIM_BATCH = 200;
export const RECORD_BATCH = 500;
/**
 * Under load, routine outcomes wait up to this long for others to share their
 * statement (an idle engine records one at once): at 1,000 deliveries a second
 * that is ~20 rows a statement instead of ~7, a third of the round trips and
 * of PostgreSQL's time per outcome (bench/RESULTS-webhooks-first-attempts.md). The receiver
 * has its answer already; only the delivery's view waits.
 */
export const RECORD_SPACING_MS = 20;
/**
 * A first attempt goes out on the grace alone (no lease of its own) only if
 * its lane reaches it this soon after the commit, and its transaction began
 * less than FRESH_EVENT_AGE_MS ago (by the database's clock): with the 10 s
 * timeout, its outcome is recorded long before the 60 s grace lets any worker
 * take the row.
 */
export const FRESH_WITHIN_MS = 5_000;
export const FRESH_EVENT_AGE_MS = 20_000;
/** Graceful stop: attempts in flight get this long to finish (just over one attempt's timeout); the rest stay pending. */
export const STOP_WAIT_MS = ATTEMPT_TIMEOUT_MS + 2_000;
