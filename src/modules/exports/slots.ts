// EXTENSIONS 8: at most 2 exports streaming per key at once. Counted per
// instance (PGlite serves one instance; it would otherwise queue a third
// export behind the transactions of the first two) and, on PostgreSQL, across
// instances by two advisory locks per key held by the export's transaction,
// which the database releases when it ends, however it ends.
import type { Db, Sql } from '../../platform/db/db.ts';
import { AppError } from '../../platform/contract/errors.ts';

export const EXPORTS_PER_KEY = 2;

const streaming = new WeakMap<Db, Map<string, number>>();

function refusal(): AppError {
  return new AppError('rate_limited', `at most ${EXPORTS_PER_KEY} exports may stream at once per API key; wait for one to finish`, {
    reason: 'concurrent_exports',
    limit: EXPORTS_PER_KEY,
  });
}

/** Takes one of the key's slots on this instance; the returned function gives it back (once). */
export function takeSlot(db: Db, keyId: string): () => void {
  let counts = streaming.get(db);
  if (!counts) streaming.set(db, (counts = new Map()));
  const held = counts.get(keyId) ?? 0;
  if (held >= EXPORTS_PER_KEY) throw refusal();
  counts.set(keyId, held + 1);
  let given = false;
  return () => {
    if (given) return;
    given = true;
    const now = (counts.get(keyId) ?? 1) - 1;
    if (now) counts.set(keyId, now);
    else counts.delete(keyId);
  };
}

/** On PostgreSQL, one of the key's slots across instances, held until `tx` ends. */
export async function takeSharedSlot(db: Db, tx: Sql, keyId: string): Promise<void> {
  if (db.kind !== 'postgres') return;
  for (let slot = 1; slot <= EXPORTS_PER_KEY; slot++) {
    const { rows } = await tx.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext('merx_export:' || $1), $2) AS ok", [keyId, slot]);
    if (rows[0].ok) return;
  }
  throw refusal();
}
