// Authentication without a round trip (issue 12): each instance keeps the
// keys it has seen (hash -> account, scopes, plan) for a short while.
// SPEC Authentication 4 "revocation is immediate" still holds: migration 014
// announces every change that affects a key on merx_key_changes when it
// commits, and every instance LISTENs and forgets the key at once. While the
// listening connection is down nothing is cached, so a missed announcement
// can never leave a revoked key working.
import type { Db } from './db.ts';
import { bearerToken, hashApiKey, isKeyShaped, lookupKey, type AuthenticatedKey } from './auth.ts';
import { unauthorized } from './errors.ts';

export const KEY_CHANGES_CHANNEL = 'merx_key_changes';
/** A key unused for this long is read again (bounds any staleness the announcements would not cover). */
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
/** SPEC Authentication 2: last_used_at is written at most once a minute per key. */
const LAST_USED_EVERY_MS = 60_000;
/** How long a change made here waits at most to hear its own announcement. */
const ANNOUNCEMENT_WAIT_MS = 2_000;
/**
 * PostgreSQL signals every listener at the commit; the instances read it
 * within a few milliseconds of each other (measured: 3 ms apart in one
 * process). After hearing its own, the changing instance allows this much
 * more before it answers, so the next request anywhere sees the change.
 */
const ANNOUNCEMENT_SPREAD_MS = 100;

interface Entry {
  key: AuthenticatedKey;
  expires: number;
}

export class KeyCache {
  private readonly db: Db;
  private readonly entries = new Map<string, Entry>();
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private unlisten: (() => Promise<void>) | null = null;
  private listening = false;
  /** Bumped by every announcement: a lookup that overlapped one does not store what it read. */
  private generation = 0;

  constructor(db: Db) {
    this.db = db;
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(KEY_CHANGES_CHANNEL, (payload) => this.heard(payload), {
      onLost: () => {
        this.listening = false;
        this.generation++;
        this.entries.clear();
      },
      onReady: () => {
        this.listening = true;
      },
    });
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.entries.clear();
    await this.unlisten?.();
  }

  /** Resolves a bearer header to the key and its account, or throws 401. */
  async authenticate(header: string | undefined): Promise<AuthenticatedKey> {
    const token = bearerToken(header);
    if (!token || !isKeyShaped(token)) throw unauthorized();
    const hash = hashApiKey(token);
    const now = Date.now();
    let key = this.entries.get(hash);
    if (!key || key.expires <= now) {
      this.entries.delete(hash);
      const generation = this.generation;
      const found = await lookupKey(this.db, hash);
      key = { key: found, expires: now + TTL_MS };
      if (this.listening && generation === this.generation) this.remember(hash, key);
    }
    this.touchLastUsed(key.key.keyId, now);
    return key.key;
  }

  /**
   * Runs a change that the database will announce (`key:<id>` or
   * `account:<id>`), forgets here at once, and returns once this instance has
   * heard the announcement and the others have had time to (ANNOUNCEMENT_SPREAD_MS),
   * so the operator's next request on any instance already sees the change.
   */
  async announced<T>(announcement: string, change: () => Promise<T>): Promise<T> {
    let resolve = () => {};
    const heard = new Promise<void>((done) => (resolve = done));
    const timer = setTimeout(resolve, ANNOUNCEMENT_WAIT_MS);
    const waiting = this.waiters.get(announcement) ?? new Set();
    this.waiters.set(announcement, waiting.add(resolve));
    try {
      const result = await change();
      this.forget(announcement);
      await heard;
      await new Promise((done) => setTimeout(done, ANNOUNCEMENT_SPREAD_MS));
      return result;
    } finally {
      clearTimeout(timer);
      waiting.delete(resolve);
      if (!waiting.size) this.waiters.delete(announcement);
    }
  }

  private heard(announcement: string): void {
    this.forget(announcement);
    for (const resolve of this.waiters.get(announcement) ?? []) resolve();
  }

  private forget(announcement: string): void {
    this.generation++;
    const [kind, id] = announcement.split(':');
    for (const [hash, entry] of this.entries) {
      if ((kind === 'key' && entry.key.keyId === id) || (kind === 'account' && entry.key.accountId === id) || !id) this.entries.delete(hash);
    }
  }

  private remember(hash: string, entry: Entry): void {
    // Map order is insertion order: the oldest entry goes first.
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, entry);
  }

  /** Off the request path: the write is not awaited, and a failure only allows the next attempt sooner. */
  private touchLastUsed(keyId: string, now: number): void {
    if (now - (this.lastUsedWrites.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    if (this.lastUsedWrites.size >= MAX_ENTRIES) this.lastUsedWrites.clear();
    this.lastUsedWrites.set(keyId, now);
    this.db
      .query(
        `UPDATE api_keys SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [keyId],
      )
      .catch(() => this.lastUsedWrites.delete(keyId));
  }
}
