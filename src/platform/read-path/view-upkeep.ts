// Writing the documents of rows that an older declaration of a stored view
// (or none) wrote (issue 29). The upkeep itself (columns, triggers) is a
// checked-in migration (view-migrations.ts); a migration that changes a view
// resets its stored_views row, and every instance, once it listens, rewrites
// that view's rows in the background. Until a row is rewritten, reads build
// its view from the row (stored-view.ts storedRead), so answers are correct
// throughout and only slower.
//
// The backfill never holds the table: each batch is its own short
// transaction that rewrites a few hundred rows by id (row locks on those
// rows only), and records how far it came, so that a restart resumes and
// several instances starting at once take turns (the progress row's lock)
// instead of doing the work twice. A batch is sized by time, not rows: at 1M
// orders a row cost ~1 ms of PostgreSQL's CPU on an idle core and ~8 ms on a
// loaded one (bench/RESULTS-view-backfill.md), so a fixed 2,000 rows held a
// writer of one of them for 2 to 15 s. Nothing lives in the session: every
// statement stands in its own transaction (PgBouncer transaction pooling).
import type { Db, Sql } from '../db/db.ts';
import { DOCUMENT_COLUMN, type View } from './stored-view.ts';
import { VIEW_MIGRATION_COMMAND } from './view-migrations.ts';

/** How long a backfill batch should hold its rows, and the bounds of its size. */
export const BATCH_TARGET_MS = 250;
export const BATCH_ROWS = { first: 200, min: 20, max: 2000 };

/**
 * The stored views whose upkeep in the database is not their declaration's
 * (a declaration changed without its migration, or code older than the
 * database): their documents are never current, so reads build them from
 * the row (correct, slower) and the backfill leaves them alone.
 */
export async function upkeepMismatches(db: Db, views: readonly View[]): Promise<string[]> {
  const { rows } = await db.query<{ name: string; definition_sha256: string }>('SELECT name, definition_sha256 FROM stored_views');
  const installed = new Map(rows.map((r) => [r.name, r.definition_sha256]));
  return views.filter((v) => v.stored && installed.get(v.name) !== v.version).map((v) => v.name);
}

export function mismatchMessage(names: readonly string[]): string {
  return `stored views ${names.join(', ')}: the database's upkeep is not this code's declaration, so these views are built when read; run \`${VIEW_MIGRATION_COMMAND}\` and deploy its migration`;
}

export interface BackfillProgress {
  view: string;
  rows: number;
  batches: number;
  /** The longest batch, ms: how long its rows were locked. */
  longestBatchMs: number;
}

/**
 * Writes the document of every row whose view is not backfilled yet; returns
 * what each view took. `stopped` is asked between batches (an instance closing).
 */
export async function backfillViews(db: Db, views: readonly View[], stopped: () => boolean = () => false): Promise<BackfillProgress[]> {
  const progress: BackfillProgress[] = [];
  const mismatched = new Set(await upkeepMismatches(db, views));
  for (const view of views.filter((v) => v.stored && !mismatched.has(v.name))) {
    const done: BackfillProgress = { view: view.name, rows: 0, batches: 0, longestBatchMs: 0 };
    let size = BATCH_ROWS.first;
    while (!stopped()) {
      const started = performance.now();
      const batch = await db.tx((tx) => backfillBatch(tx, view, size));
      if (batch === null) break;
      const ms = performance.now() - started;
      done.rows += batch;
      done.batches++;
      done.longestBatchMs = Math.max(done.longestBatchMs, ms);
      // The next batch as many rows as this one's pace fits in the target (no more than double: one fast batch is no trend).
      if (batch === size) size = Math.round(Math.min(BATCH_ROWS.max, 2 * size, Math.max(BATCH_ROWS.min, (size * BATCH_TARGET_MS) / Math.max(ms, 1))));
    }
    if (done.rows) progress.push(done);
  }
  return progress;
}

/** One batch: the rows written, or null when the view is backfilled. */
async function backfillBatch(tx: Sql, view: View, size: number): Promise<number | null> {
  const { rows } = await tx.query<{ backfilled: boolean; backfilled_through: string | null }>(
    'SELECT backfilled, backfilled_through::text FROM stored_views WHERE name = $1 FOR UPDATE',
    [view.name],
  );
  if (!rows[0] || rows[0].backfilled) return null;
  // Setting the document to NULL makes the view's own trigger write it: the same code as any other write.
  const { rows: written } = await tx.query<{ n: number; last: string | null }>(
    `WITH batch AS (
       SELECT id FROM ${view.table} WHERE $1::uuid IS NULL OR id > $1::uuid ORDER BY id LIMIT ${Number(size)} FOR UPDATE
     ), written AS (
       UPDATE ${view.table} t SET ${DOCUMENT_COLUMN} = NULL FROM batch WHERE t.id = batch.id RETURNING t.id
     )
     SELECT count(*)::int AS n, max(id::text COLLATE "C") AS last FROM written`,
    [rows[0].backfilled_through],
  );
  const { n, last } = written[0];
  await tx.query(
    'UPDATE stored_views SET backfilled_through = COALESCE($2::uuid, backfilled_through), backfilled = $3, updated_at = now() WHERE name = $1',
    [view.name, last, n < size],
  );
  return n;
}

export interface BackgroundBackfill {
  /** Settles when every stored view is backfilled (or the instance stopped it); never rejects: a failure is logged. */
  readonly done: Promise<BackfillProgress[]>;
  /** Whether rows are still being rewritten (/healthz shows it). */
  running(): boolean;
  stop(): Promise<void>;
}

type Log = { info: (fields: object, message: string) => void; error: (fields: object, message: string) => void };

/**
 * Runs backfillViews after the instance listens. A failed batch (the database
 * away) is logged and the rest left to the next start or another instance:
 * reads stay correct without it.
 */
export function startBackfill(db: Db, views: readonly View[], log: Log): BackgroundBackfill {
  let stopping = false;
  // Backfilling only once a view is known to have rows left: a fresh or current database never says so.
  let running = false;
  const stored = views.filter((v) => v.stored).map((v) => v.name);
  const done = db
    .query<{ pending: boolean }>('SELECT EXISTS (SELECT 1 FROM stored_views WHERE name = ANY($1::text[]) AND NOT backfilled) AS pending', [stored])
    .then(({ rows }) => {
      running = rows[0]?.pending === true && !stopping;
      return running ? backfillViews(db, views, () => stopping) : [];
    })
    .then((progress) => {
      for (const p of progress) {
        log.info({ view: p.view, rows: p.rows, batches: p.batches, longest_batch_ms: Math.round(p.longestBatchMs) }, 'stored view documents written');
      }
      return progress;
    })
    .catch((err: unknown) => {
      if (!stopping) log.error({ err }, 'stored view backfill stopped; reads build the views it did not reach from their rows');
      return [];
    })
    .finally(() => {
      running = false;
    });
  return {
    done,
    running: () => running,
    async stop() {
      stopping = true;
      await done;
    },
  };
}
