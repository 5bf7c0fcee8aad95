// Authentication without a round trip (issue 12): each instance keeps the
// keys it has seen (hash -> account, scopes, plan) for a short while.
// SPEC Authentication 4 "revocation is immediate" still holds: migration 014
// announces every change that affects a key on merx_key_changes when it
// commits, and every instance LISTENs and forgets the key at once. While the
// listening connection is down nothing is cached, so a missed announcement
// can never leave a revoked key working.
//
// Issue 27, floods: a well-formed key the database does not know (or no longer
// admits) is remembered as such for UNKNOWN_TTL_MS, so the same unknown key
// sent again costs no transaction. Any announcement forgets every unknown key
// (an account reactivated, a key issued), and so does losing the listening
// connection, so a refusal is never replayed past a change. Failed
// authentications are counted per client address (rate-limit.ts
// AuthFailureLimit): past the limit, 429 comes before any lookup, except for a
// key this instance already knows to be valid, which keeps working.
//
// Issue 38, the primary away (a crash, a failover): the listening connection
// drops with it, yet the keys known here stay usable while no primary takes
// writes, since a revocation is a write and none can commit then; reads go on
// on a replica. While the connection is away and a primary answers, every
// request looks its key up again (an announcement may have been missed), and
// everything known is forgotten when the connection is back.
import type { Db } from '../db/db.ts';
import { isUnavailableError } from '../db/health.ts';
import {
  bearerToken,
  hashApiKey,
  isAccessTokenShaped,
  isKeyShaped,
  lookupAccessToken,
  lookupKey,
  unusableHeader,
  type AuthenticatedKey,
} from './auth.ts';
import { AppError } from '../contract/errors.ts';
import type { AuthFailureLimit } from './rate-limit.ts';

export const KEY_CHANGES_CHANNEL = 'merx_key_changes';
/** A key unused for this long is read again (bounds any staleness the announcements would not cover). */
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
/** How long a refused key is answered 401 without asking the database again. */
const UNKNOWN_TTL_MS = 10_000;
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

interface Refusal {
  error: AppError;
  expires: number;
}

export class KeyCache {
  private readonly db: Db;
  private readonly failures: AuthFailureLimit | null;
  /** Stamps the key's last_used_at: the accounts room's write, handed in by the composition root (server.ts). */
  private readonly markUsed: (keyId: string) => Promise<unknown>;
  private readonly entries = new Map<string, Entry>();
  /** Well-formed keys the database refused, by hash: the same 401 again without a transaction. */
  private readonly refused = new Map<string, Refusal>();
  /** Key lookups sent to the database (tests read it: an unknown key repeated costs one). */
  lookups = 0;
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private unlisten: (() => Promise<void>) | null = null;
  private listening = false;
  /** Bumped by every announcement: a lookup that overlapped one does not store what it read. */
  private generation = 0;

  constructor(db: Db, options: { markUsed: (keyId: string) => Promise<unknown>; failures?: AuthFailureLimit | null }) {
    this.db = db;
    this.markUsed = options.markUsed;
    this.failures = options.failures ?? null;
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(KEY_CHANGES_CHANNEL, (payload) => this.heard(payload), {
      onLost: () => {
        this.listening = false;
        this.generation++;
        this.refused.clear();
      },
      onReady: () => {
        // Whatever was announced while the connection was away was not heard.
        this.entries.clear();
        this.refused.clear();
        this.listening = true;
      },
    });
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.entries.clear();
    this.refused.clear();
    await this.unlisten?.();
  }

  /**
   * Resolves a bearer header to the key and its account, or throws 401 (429
   * once `clientAddress` is past the failed-authentication limit). A missing
   * or malformed key costs nothing and is not counted.
   */
  async authenticate(header: string | undefined, clientAddress = 'unknown'): Promise<AuthenticatedKey> {
    const token = bearerToken(header);
    // EXTENSIONS 10: an OAuth access token is cached, announced and revoked as its grant's backing key is.
    const accessToken = !!token && isAccessTokenShaped(token);
    if (!token || (!accessToken && !isKeyShaped(token))) throw unusableHeader(header);
    const hash = hashApiKey(token);
    const now = Date.now();
    let known = this.entries.get(hash);
    if (known?.key.expiresAt !== undefined && known.key.expiresAt <= now) known = undefined;
    // Issue 38: with no primary no revocation can commit, so what this instance knows still holds.
    const primaryAway = !this.listening && this.db.health.isDown;
    const key =
      known && (primaryAway || (this.listening && known.expires > now))
        ? known
        : await this.lookupOrKnown(hash, accessToken, now, clientAddress, known);
    this.touchLastUsed(key.key.keyId, now);
    return key.key;
  }

  /** The key looked up; what this instance knew of it when the primary went away before the health monitor saw it. */
  private async lookupOrKnown(hash: string, accessToken: boolean, now: number, clientAddress: string, known: Entry | undefined): Promise<Entry> {
    await this.failures?.refuseIfLimited(`api-key:${clientAddress}`);
    try {
      const found = await this.lookup(hash, accessToken, now, clientAddress);
      const entry = { key: found.key, expires: Math.min(now + TTL_MS, found.key.expiresAt ?? Infinity) };
      if (found.storable) this.remember(hash, entry);
      else this.entries.delete(hash);
      return entry;
    } catch (err) {
      if (known && isUnavailableError(err)) return known;
      this.entries.delete(hash);
      throw err;
    }
  }

  /** The key from the database, or its refusal (remembered for UNKNOWN_TTL_MS, and counted against the address). */
  private async lookup(
    hash: string,
    accessToken: boolean,
    now: number,
    clientAddress: string,
  ): Promise<{ key: AuthenticatedKey; storable: boolean }> {
    const known = this.refused.get(hash);
    if (known && known.expires > now) return this.fail(clientAddress, known.error);
    this.refused.delete(hash);
    const generation = this.generation;
    this.lookups++;
    try {
      const key = await (accessToken ? lookupAccessToken : lookupKey)(this.db, hash);
      return { key, storable: this.listening && generation === this.generation };
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'unauthorized') throw err;
      if (this.listening && generation === this.generation) this.rememberRefusal(hash, { error: err, expires: now + UNKNOWN_TTL_MS });
      return this.fail(clientAddress, err);
    }
  }

  private fail(clientAddress: string, refusal: AppError): Promise<never> {
    if (!this.failures) throw refusal;
    return this.failures.failed(`api-key:${clientAddress}`, refusal);
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
    // Refusals carry no key or account id to match; any change may have made one of them wrong.
    this.refused.clear();
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

  private rememberRefusal(hash: string, refusal: Refusal): void {
    if (this.refused.size >= MAX_ENTRIES) this.refused.delete(this.refused.keys().next().value!);
    this.refused.set(hash, refusal);
  }

  /** Off the request path: the write is not awaited, and a failure only allows the next attempt sooner. */
  private touchLastUsed(keyId: string, now: number): void {
    if (now - (this.lastUsedWrites.get(keyId) ?? 0) < LAST_USED_EVERY_MS) return;
    if (this.lastUsedWrites.size >= MAX_ENTRIES) this.lastUsedWrites.clear();
    this.lastUsedWrites.set(keyId, now);
    this.markUsed(keyId).catch(() => this.lastUsedWrites.delete(keyId));
  }
}
