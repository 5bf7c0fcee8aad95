// Which columns hold sealed secrets (issue 27), and the start-up steps around
// them: refuse to start without the keys the database needs, seal what is
// still plaintext (rows from before migration 020), and re-seal everything
// under the current key when the operator rotates it (`npx merx secrets reseal`).
import type { Db } from '../db/db.ts';
import crypto from 'node:crypto';
import { KEYS_VARIABLE, KEY_FILE, SecretBox, isSealed, loadKeys, parseKeys, type SealingKey } from './secret-box.ts';

interface SealedColumn {
  table: string;
  column: string;
}

/** Every column whose values are sealed. The rooms that write them seal; the readers open. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'webhook_subscriptions', column: 'secret' },
  { table: 'webhook_subscriptions', column: 'previous_secret' },
  { table: 'webhook_retired_secrets', column: 'secret' },
  { table: 'courier_integrations', column: 'credentials' },
  { table: 'courier_integrations', column: 'push_token' },
  { table: 'idempotency_keys', column: 'response_body' },
];

/** PostgreSQL without ENCRYPTION_KEYS: the generated key (`id:base64key`), shared by every instance of the database. */
const DATABASE_KEY_SETTING = 'encryption_key';
/** The ids of every key that has sealed something since the last reseal (settings). */
const KEY_IDS_SETTING = 'encryption_key_ids';
/** Set once the plaintext left from before migration 020 is sealed, so later starts skip the scan. */
const SEALED_SETTING = 'plaintext_secrets_sealed';
const BATCH = 500;

export class MissingKeyError extends Error {}

/**
 * The keyring for this service (installed into db.keyring), checked against the database: when values
 * are sealed under a key this instance lacks, it stops at start with a
 * sentence naming the variable, rather than failing on the first webhook.
 * Then its sealing key is recorded and any plaintext left is sealed.
 */
export async function openSecretsAtRest(
  db: Db,
  config: { encryptionKeys: SealingKey[] | null; dataDir: string },
  log?: { warn(message: string): void },
): Promise<SecretBox> {
  const box = new SecretBox(await keysFor(db, config, log));
  const { rows } = await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [KEY_IDS_SETTING]);
  const missing = (rows[0]?.value.split(',') ?? []).filter((id) => id && !box.keys.some((k) => k.id === id));
  if (missing.length) {
    const source = config.encryptionKeys?.length
      ? KEYS_VARIABLE
      : db.kind === 'postgres'
        ? 'the database'
        : `the key file ${config.dataDir}/${KEY_FILE}`;
    throw new MissingKeyError(
      `the database holds secrets sealed with key ${missing.map((id) => `"${id}"`).join(', ')}, which ${source} does not hold. ` +
        `Set ${KEYS_VARIABLE} to every key in use (id:base64key, the sealing key first, comma-separated), or start from the DATA_DIR ` +
        'whose encryption-key file holds it (see docs/operations.md, Encryption at rest).',
    );
  }
  await db.query(
    `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE
       SET value = CASE WHEN position(',' || $2 || ',' IN ',' || settings.value || ',') > 0 THEN settings.value ELSE settings.value || ',' || $2 END`,
    [KEY_IDS_SETTING, box.sealingKeyId],
  );
  db.keyring.install(box);
  const { rows: sealed } = await db.query('SELECT 1 FROM settings WHERE key = $1', [SEALED_SETTING]);
  if (!sealed.length) {
    await resealColumns(db, box, (stored) => !isSealed(stored));
    await db.query(`INSERT INTO settings (key, value) VALUES ($1, 'v1') ON CONFLICT (key) DO NOTHING`, [SEALED_SETTING]);
  }
  return box;
}

/**
 * ENCRYPTION_KEYS, else a generated key: in DATA_DIR for the embedded
 * database (one directory, one database), and for PostgreSQL in the database
 * itself, so that every instance opens what any other sealed whatever
 * directory it starts from (a key file per machine would lock the second
 * machine out). Kept beside the data it seals, such a key keeps secrets out
 * of exports of their tables, logs and copies of rows, not from someone with
 * the whole database: production sets ENCRYPTION_KEYS, and a warning says so.
 */
async function keysFor(db: Db, config: { encryptionKeys: SealingKey[] | null; dataDir: string }, log?: { warn(message: string): void }) {
  if (config.encryptionKeys?.length || db.kind !== 'postgres') return loadKeys(config.encryptionKeys, config.dataDir);
  log?.warn(
    `${KEYS_VARIABLE} is not set: secrets are sealed under a key kept in the database itself; set ${KEYS_VARIABLE} in production (docs/operations.md)`,
  );
  const fresh = `db${crypto.randomBytes(4).toString('hex')}:${crypto.randomBytes(32).toString('base64')}`;
  // ON CONFLICT keeps the first key when several instances start at once.
  const { rows } = await db.query<{ value: string }>(
    'INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = settings.value RETURNING value',
    [DATABASE_KEY_SETTING, fresh],
  );
  return parseKeys(rows[0].value);
}

/**
 * Re-seals every value not under the current key (plaintext included), in
 * batches, each row written only if it still holds what was read (a row
 * written meanwhile is already sealed by its writer). Returns the count per
 * column.
 */
async function resealColumns(
  db: Db,
  box: SecretBox,
  needsIt: (stored: string) => boolean,
): Promise<{ counts: Record<string, number>; missed: number }> {
  const counts: Record<string, number> = {};
  let missed = 0;
  for (const { table, column } of SEALED_COLUMNS) {
    let done = 0;
    let after = '(0,0)';
    for (;;) {
      // Walked in physical order: ctid is the one row address every table here has, in PostgreSQL and PGlite alike.
      const { rows } = await db.query<{ at: string; value: string }>(
        `SELECT ctid::text AS at, ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL AND ctid > $1::tid ORDER BY ctid LIMIT ${BATCH}`,
        [after],
      );
      if (!rows.length) break;
      after = rows[rows.length - 1].at;
      for (const row of rows) {
        if (!needsIt(row.value)) continue;
        const plain = isSealed(row.value) ? box.open(row.value) : row.value;
        const { rowCount } = await db.query(`UPDATE ${table} SET ${column} = $2 WHERE ctid = $1::tid AND ${column} = $3`, [
          row.at,
          box.seal(plain),
          row.value,
        ]);
        done += rowCount;
        missed += 1 - rowCount;
      }
    }
    counts[`${table}.${column}`] = done;
  }
  return { counts, missed };
}

/**
 * Key rotation: every value under the current (first) key, then only that
 * key recorded as in use, so the old one may leave ENCRYPTION_KEYS. Every
 * running instance must already seal with the new key (restarted with it
 * first) or it would seal under the old one again.
 */
export async function resealAll(db: Db, box: SecretBox): Promise<{ key_id: string; resealed: Record<string, number> }> {
  const resealed: Record<string, number> = {};
  // Passes until one finds nothing left: a value copied meanwhile under the old key (a webhook secret rotated while
  // the pass went by, an instance not yet restarted) is caught by the next pass instead of being left behind.
  for (let pass = 1; ; pass++) {
    const { counts, missed } = await resealColumns(db, box, (stored) => !box.isCurrent(stored));
    for (const [column, n] of Object.entries(counts)) resealed[column] = (resealed[column] ?? 0) + n;
    if (Object.values(counts).every((n) => n === 0) && missed === 0) break;
    if (pass === 10) throw new Error('values keep arriving under an older key: restart every instance with the new key first, then reseal again');
  }
  await db.query(`INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2`, [KEY_IDS_SETTING, box.sealingKeyId]);
  return { key_id: box.sealingKeyId, resealed };
}
