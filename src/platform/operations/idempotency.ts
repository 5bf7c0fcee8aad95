// EXTENSIONS 2, idempotency keys, for REST (Idempotency-Key) and MCP
// (_meta.idempotency_key) alike: one key space per account.
//
// The first request with a key claims it: a row committed before the
// operation runs, holding the request's fingerprint, a fencing token
// (`owner`) and a lease that a heartbeat renews while it runs. A second
// request finds the row: another fingerprint is 409 idempotency_key_reused,
// no answer yet is 409 idempotency_key_in_use, an answer is replayed. Every
// transaction the operation commits also marks the row under its token, so
// nothing is ever committed twice for one key: a request that lost its lease
// (its process stalled past it) cannot commit, and a row whose owner died is
// only taken over when nothing of it had been committed.
import crypto from 'node:crypto';
import type { Db, Sql } from '../db/db.ts';
import { AppError } from '../contract/errors.ts';
import { fencedDb } from '../db/fenced-db.ts';
import { canonicalJson } from '../contract/canonical-json.ts';
import type { Operation } from './operation.ts';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Response headers a replay repeats. */
export const REPLAYED_RESPONSE_HEADERS = ['location', 'etag'];

const KEY_SHAPE = /^[!-~]{1,255}$/;
const KEEP_SEC = 24 * 3600;
/**
 * Issue 38: a request cut off by a failover frees its key when the lease
 * lapses (its own release cannot reach a database that is away), so the lease
 * is short and a heartbeat renews it while the request runs: a retry finds the
 * key free within seconds, never while its first request still runs.
 */
const LEASE_SEC = 5;
const HEARTBEAT_MS = 1_500;
/** How often a late answer is stored again while the database is away (about ten minutes in all). */
const SETTLE_RETRIES = 60;

export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** rest: the bytes REST sent; mcp: the JSON text of the MCP result. */
  origin: 'rest' | 'mcp';
}

/** EXTENSIONS 2: 401, 403, 429 and 5xx are not stored; the key stays free for a retry. */
export function isStorable(status: number): boolean {
  return status !== 401 && status !== 403 && status !== 429 && status < 500;
}

export function checkIdempotencyKey(value: unknown): string {
  if (typeof value !== 'string' || !KEY_SHAPE.test(value)) {
    throw new AppError('validation_failed', 'an idempotency key is 1 to 255 printable ASCII characters from ! to ~ (no spaces)');
  }
  return value;
}

export interface RequestParts {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

/** "The same request": method, path with its parameters, query and body, JSON compared by meaning (3 equals 3.0). */
export function requestFingerprint(op: Operation, parts: RequestParts): string {
  const path = op.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => encodeURIComponent(String(parts.params[name] ?? '')));
  const query = Object.fromEntries(Object.entries(parts.query).map(([name, value]) => [name, String(value)]));
  return crypto
    .createHash('sha256')
    .update(canonicalJson([op.method, path, query, parts.body ?? {}]))
    .digest('hex');
}

const reused = () =>
  new AppError('conflict', 'idempotency_key_reused: this idempotency key was used for a different request (method, path or body)', {
    reason: 'idempotency_key_reused',
  });
const inUse = () =>
  new AppError('conflict', 'idempotency_key_in_use: the first request with this idempotency key has not finished; retry later', {
    reason: 'idempotency_key_in_use',
  });

export type Claim = { replay: StoredAnswer } | { run: IdempotentRun };

/** Claims `key` for this request, or finds the stored answer to replay; 409 when the key is busy or taken by another request. */
export async function claimIdempotencyKey(db: Db, accountId: string, key: string, fingerprint: string): Promise<Claim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const owner = crypto.randomUUID();
    const { rows } = await db.query<{ owner: string }>(
      `INSERT INTO idempotency_keys AS k (account_id, key, fingerprint, owner, locked_until, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5), now() + make_interval(secs => $6))
       ON CONFLICT (account_id, key) DO UPDATE
         SET fingerprint = excluded.fingerprint, owner = excluded.owner, locked_until = excluded.locked_until, effect_committed = false,
             response_status = NULL, response_headers = NULL, response_body = NULL, response_origin = NULL,
             created_at = now(), expires_at = excluded.expires_at
       -- Free again: expired, or abandoned by a request that died before committing anything.
       WHERE k.expires_at <= now()
          OR (k.response_status IS NULL AND NOT k.effect_committed AND k.locked_until < now() AND k.fingerprint = excluded.fingerprint)
       RETURNING owner`,
      [accountId, key, fingerprint, owner, LEASE_SEC, KEEP_SEC],
    );
    if (rows[0]?.owner === owner) return { run: new IdempotentRun(db, accountId, key, owner) };
    const { rows: found } = await db.query<{
      fingerprint: string;
      response_status: number | null;
      response_headers: Record<string, string> | null;
      response_body: string | null;
      response_origin: 'rest' | 'mcp' | null;
    }>(
      `SELECT fingerprint, response_status, response_headers, response_body, response_origin
         FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at > now()`,
      [accountId, key],
    );
    const existing = found[0];
    if (!existing) continue; // released or expired between the two statements: claim again
    if (existing.fingerprint !== fingerprint) throw reused();
    if (existing.response_status === null) throw inUse();
    return {
      replay: {
        status: existing.response_status,
        headers: existing.response_headers ?? {},
        body: existing.response_body === null ? '' : db.keyring.open(existing.response_body),
        origin: existing.response_origin ?? 'rest',
      },
    };
  }
  throw inUse();
}

/** A request that holds a key: run the operation on fenced(), then finish() with its answer. */
export class IdempotentRun {
  private readonly db: Db;
  private readonly id: [string, string, string];
  private heartbeat: NodeJS.Timeout | null;

  constructor(db: Db, accountId: string, key: string, owner: string) {
    this.db = db;
    this.id = [accountId, key, owner];
    this.heartbeat = setInterval(() => {
      db.query('UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => $4) WHERE account_id = $1 AND key = $2 AND owner = $3', [
        ...this.id,
        LEASE_SEC,
      ]).catch(() => {});
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * The answer stored in the transaction that commits the request's effect
   * (issue 27): once the effect is committed, a retry replays this answer, even
   * when the connection drops right after the commit and the request itself
   * never learns the outcome. Refused (409 in use) when the request lost its
   * lease, so nothing commits for a key another request holds.
   */
  async storeInTransaction(tx: Sql, answer: StoredAnswer): Promise<void> {
    // Issue 27: answers carry secrets (a webhook's signing secret), so their bodies are sealed at rest.
    const { rowCount } = await tx.query(
      `UPDATE idempotency_keys SET effect_committed = true, response_status = $4, response_headers = $5, response_body = $6, response_origin = $7,
              owner = NULL, locked_until = NULL
        WHERE account_id = $1 AND key = $2 AND owner = $3`,
      [...this.id, answer.status, JSON.stringify(answer.headers), tx.keyring.seal(answer.body), answer.origin],
    );
    if (rowCount === 0) throw inUse();
    tx.afterCommit(() => this.stopHeartbeat());
  }

  /**
   * For an operation that commits on its own between calls to the outside
   * world (Operation.ownTransactions): the Db it runs on, where each
   * transaction it commits also proves, under the fencing token, that this
   * request still holds the key. Its answer is stored by finish() after.
   */
  fenced(): Db {
    const { id } = this;
    return fencedDb(this.db, async (tx) => {
      const { rowCount } = await tx.query(
        'UPDATE idempotency_keys SET effect_committed = true WHERE account_id = $1 AND key = $2 AND owner = $3',
        id,
      );
      if (rowCount === 0) throw inUse();
    });
  }

  /** False once the answer is stored (or the request abandoned). */
  private stopHeartbeat(): boolean {
    if (!this.heartbeat) return false;
    clearInterval(this.heartbeat);
    this.heartbeat = null;
    return true;
  }

  /** Frees the key, unless something was committed under it: that must never run twice. True when freed. */
  private async release(): Promise<boolean> {
    const { rowCount } = await this.db.query(
      'DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND owner = $3 AND NOT effect_committed',
      this.id,
    );
    return rowCount > 0;
  }

  /**
   * Stores the answer for replays when it was not stored with the effect (a
   * refusal, or an operation with its own transactions); an answer that is
   * not stored frees the key instead (if nothing was committed). Never
   * throws: a key left leased frees itself when its lease lapses, unless
   * something was committed under it, and then its answer is stored again a
   * few times while the database comes back (see settleLater).
   */
  async finish(answer: StoredAnswer): Promise<void> {
    if (!this.stopHeartbeat()) return;
    await this.settle(answer).catch(() => this.settleLater(answer, 1));
  }

  private async settle(answer: StoredAnswer): Promise<void> {
    if (!isStorable(answer.status) && (await this.release())) return;
    await this.db.query(
      `UPDATE idempotency_keys SET response_status = $4, response_headers = $5, response_body = $6, response_origin = $7, owner = NULL, locked_until = NULL
        WHERE account_id = $1 AND key = $2 AND owner = $3`,
      [...this.id, answer.status, JSON.stringify(answer.headers), this.db.keyring.seal(answer.body), answer.origin],
    );
  }

  /** The database was away when the answer came: settle again for a while (an effect committed under the key must become replayable). */
  private settleLater(answer: StoredAnswer, attempt: number): void {
    if (attempt > SETTLE_RETRIES) return;
    const timer = setTimeout(
      () => {
        this.settle(answer).catch(() => this.settleLater(answer, attempt + 1));
      },
      Math.min(1000 * attempt, 10_000),
    );
    timer.unref();
  }

  /**
   * The request ended without an answer (the client went away): the key is
   * freed if nothing was committed; otherwise it stays taken, answering
   * idempotency_key_in_use until it expires, since its effect cannot be replayed.
   */
  async abandon(): Promise<void> {
    if (this.stopHeartbeat()) await this.release().catch(() => {});
  }
}

export async function pruneIdempotencyKeys(sql: Sql, now: Date): Promise<number> {
  const { rowCount } = await sql.query('DELETE FROM idempotency_keys WHERE expires_at < $1::timestamptz', [now.toISOString()]);
  return rowCount;
}
