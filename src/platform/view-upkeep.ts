// Installing the upkeep of stored views (issue 29) and writing the documents
// of rows that existed before it. The upkeep SQL follows from each view's
// declaration (stored-view.ts); when a declaration changes (a field added),
// its upkeep is installed again and every document of that view rewritten.
//
// The backfill never holds the table: each batch is its own short
// transaction that rewrites a few hundred rows by id (row locks on those
// rows only), and records how far it came, so that a restart resumes and
// several instances starting at once take turns (the progress row's lock)
// instead of doing the work twice. A batch is sized by time, not rows: at 1M
// orders a row cost ~1 ms of PostgreSQL's CPU on an idle core and ~8 ms on a
// loaded one (bench/RESULTS-view-backfill.md), so a fixed 2,000 rows held a
// writer of one of them for 2 to 15 s. An instance serves only once every
// document is written (server.ts waits for backfillViews).
import crypto from 'node:crypto';
import type { Db, Sql } from './db.ts';
import { DOCUMENT_COLUMN, type View } from './stored-view.ts';

/** How long a backfill batch should hold its rows, and the bounds of its size. */
export const BATCH_TARGET_MS = 250;
export const BATCH_ROWS = { first: 200, min: 20, max: 2000 };

function definitionSha(view: View): string {
  return crypto.createHash('sha256').update(view.upkeepSql).digest('hex');
}

/**
 * Inside the migrations' transaction (and its lock): installs the upkeep of
 * each stored view whose definition is new or changed, and marks its
 * documents to be written. Returns the names of the views installed.
 */
export async function installViewUpkeep(tx: Sql, views: readonly View[]): Promise<string[]> {
  const installed: string[] = [];
  for (const view of views.filter((v) => v.stored)) {
    const sha = definitionSha(view);
    const { rows } = await tx.query<{ definition_sha256: string }>('SELECT definition_sha256 FROM stored_views WHERE name = $1', [view.name]);
    if (rows[0]?.definition_sha256 === sha) continue;
    await tx.exec(view.upkeepSql);
    await tx.query(
      `INSERT INTO stored_views (name, definition_sha256) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET definition_sha256 = $2, backfilled_through = NULL, backfilled = false, updated_at = now()`,
      [view.name, sha],
    );
    installed.push(view.name);
  }
  return installed;
}

export interface BackfillProgress {
  view: string;
  rows: number;
  batches: number;
  /** The longest batch, ms: how long its rows were locked. */
  longestBatchMs: number;
}

/** Writes the document of every row whose view is not backfilled yet; returns what each view took. */
export async function backfillViews(db: Db, views: readonly View[]): Promise<BackfillProgress[]> {
  const progress: BackfillProgress[] = [];
  for (const view of views.filter((v) => v.stored)) {
    const done: BackfillProgress = { view: view.name, rows: 0, batches: 0, longestBatchMs: 0 };
    let size = BATCH_ROWS.first;
    for (;;) {
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
  await tx.query('UPDATE stored_views SET backfilled_through = COALESCE($2::uuid, backfilled_through), backfilled = $3, updated_at = now() WHERE name = $1', [
    view.name,
    last,
    n < size,
  ]);
  return n;
}
