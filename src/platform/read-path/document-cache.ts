// The stored documents (issue 29) this service answered a read with last, by
// the read: pollers ask the same statement with the same parameters again
// and again, and most documents have not changed since. The read sends the
// ETags of the documents cached for it, PostgreSQL sends back a document's
// text only where the row's tag differs (NULL where it matches), and the
// answer takes the cached text, whose UTF-8 bytes are cached with it. What
// decides freshness is the comparison in the statement itself, in its
// snapshot: a cached text is used only for a row whose stored tag, the
// SHA-256 of its text, is the cached one. A page whose rows all came back
// cached is the cached page itself, whose bytes are made once
// (JsonText.cacheBytes). Each service owns its cache (issue 43, made with its
// Db): another service, another instance or a restart starts empty and is
// answered in full.
import { StoredText, type JsonText } from './json-text.ts';

/** A bound on the cache: the texts as their strings (two bytes a character, at most), UTF-8 and escaped bytes. */
const CACHE_BYTES = 48 * 1024 * 1024;
/** What a cached read costs besides its texts (its maps, its answer's pieces), so that many reads of no rows are bounded too. */
const READ_BYTES = 1024;

/** One read (a statement text and its parameters) and the documents it was answered with last, by their tags. */
export interface CachedRead {
  readonly text: string;
  readonly key: string;
  readonly documents: ReadonlyMap<string, StoredText>;
  /** The tags to send with the read, as a PostgreSQL array literal (written once: node-postgres escapes an array per query). */
  readonly tags: string;
  readonly bytes: number;
  /**
   * The whole answer made of them: a page (the same rows make the same page),
   * with the key its next_cursor was sealed by (another service in this
   * process has its own).
   */
  readonly answer: CachedPage | null;
}

export interface CachedPage {
  readonly page: JsonText;
  /** The CursorSeal that sealed the page's next_cursor, compared by identity. */
  readonly sealedBy: object;
}

/**
 * A row of a read that sent `read`'s tags: its text as PostgreSQL sent it
 * (null where the tag matched a cached one), and its tag. A CachedRead is
 * never changed, so every tag it sent names a document it has.
 */
export function documentOf(read: CachedRead, text: string | null, etag: string): StoredText {
  const document = text === null ? read.documents.get(etag) : new StoredText(text, etag);
  if (!document) throw new Error(`PostgreSQL matched ${etag}, a tag the read did not send`);
  return document;
}

/** One service's cache of the documents its reads were answered with, least recently used out first past CACHE_BYTES. */
export class DocumentCache {
  /** Per statement text (the same string instance each time: read-sql.ts keeps them), per parameters. */
  private readonly byStatement = new Map<string, Map<string, CachedRead>>();
  /** Least recently used first. */
  private readonly recency = new Set<CachedRead>();
  private cachedBytes = 0;

  /** What `text` with `params` was answered with last (nothing the first time). */
  lookup(text: string, params: readonly unknown[]): CachedRead {
    const key = JSON.stringify(params);
    const read = this.byStatement.get(text)?.get(key);
    if (!read) return { text, key, documents: new Map(), tags: '{}', bytes: 0, answer: null };
    this.recency.delete(read);
    this.recency.add(read);
    return read;
  }

  /**
   * Caches `documents` as what `read` was answered with, in place of what it
   * had. A CachedRead is never changed: a request still reading one that
   * another has replaced finds the documents it sent the tags of.
   */
  store(read: CachedRead, documents: readonly StoredText[], answer: CachedPage | null = null): void {
    const same = documents.length === read.documents.size && documents.every((d) => read.documents.get(d.etag) === d);
    if (same && (read.answer || !answer)) return;
    let reads = this.byStatement.get(read.text);
    if (!reads) this.byStatement.set(read.text, (reads = new Map()));
    const before = reads.get(read.key);
    if (before && this.recency.delete(before)) this.cachedBytes -= before.bytes;
    const next: CachedRead = {
      text: read.text,
      key: read.key,
      documents: new Map(documents.map((d) => [d.etag, d.cacheBytes()])),
      // A tag is a quoted base64url string: only its quotes need escaping in the literal.
      tags: `{${documents.map((d) => `"${d.etag.replaceAll('"', '\\"')}"`).join(',')}}`,
      // A document's string, its bytes and its escaped bytes (StoredText); a page's own bytes and escaped bytes besides
      // (JsonText.cacheBytes), each at most about 1.2 times its bytes once escaped.
      bytes: documents.reduce((sum, d) => sum + (answer ? 5 : 3) * d.utf8!.length + 2 * d.text.length, READ_BYTES + 2 * read.key.length),
      answer,
    };
    reads.set(next.key, next);
    this.recency.add(next);
    this.cachedBytes += next.bytes;
    for (const oldest of this.recency) {
      if (this.cachedBytes <= CACHE_BYTES) break;
      this.recency.delete(oldest);
      this.cachedBytes -= oldest.bytes;
      const oldReads = this.byStatement.get(oldest.text)!;
      oldReads.delete(oldest.key);
      if (oldReads.size === 0) this.byStatement.delete(oldest.text);
    }
  }
}
