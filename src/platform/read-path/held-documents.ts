// The stored documents (issue 29) this instance answered a read with last,
// by the read: pollers ask the same statement with the same parameters again
// and again, and most documents have not changed since. The read sends the
// ETags of the documents it holds, PostgreSQL sends back a document's text
// only where the row's tag differs (NULL where it matches), and the answer
// takes the held text, whose UTF-8 bytes are kept with it. What decides
// freshness is the comparison in the statement itself, in its snapshot: a
// held text is used only for a row whose stored tag, the SHA-256 of its
// text, is the held one. A page whose rows all came back held is the held
// page itself, whose bytes are made once (JsonText.keep). An instance holds
// its own; another instance or a restart starts empty and is answered in full.
import { StoredText, type JsonText } from './json-text.ts';
import type { CursorSeal } from '../contract/cursor-seal.ts';

/** A bound on what is held: the texts as their strings (two bytes a character, at most), UTF-8 and escaped bytes. */
const HELD_BYTES = 48 * 1024 * 1024;
/** What a held read costs besides its texts (its maps, its answer's pieces), so that many reads of no rows are bounded too. */
const READ_BYTES = 1024;

/** One read (a statement text and its parameters) and the documents it was answered with last, by their tags. */
export interface HeldRead {
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
  readonly answer: HeldPage | null;
}

export interface HeldPage {
  readonly page: JsonText;
  readonly sealedBy: CursorSeal;
}

/**
 * Per statement text (the same string instance each time: read-sql.ts keeps
 * them), per parameters; in `recency`, least recently used first, out first
 * past HELD_BYTES.
 */
const byStatement = new Map<string, Map<string, HeldRead>>();
const recency = new Set<HeldRead>();
let heldBytes = 0;

/** What `text` with `params` was answered with last (nothing the first time). */
export function heldFor(text: string, params: readonly unknown[]): HeldRead {
  const key = JSON.stringify(params);
  const read = byStatement.get(text)?.get(key);
  if (!read) return { text, key, documents: new Map(), tags: '{}', bytes: 0, answer: null };
  recency.delete(read);
  recency.add(read);
  return read;
}

/**
 * A row of a read that sent `read`'s tags: its text as PostgreSQL sent it
 * (null where the tag matched one held), and its tag. A HeldRead is never
 * changed, so every tag it sent names a document it holds.
 */
export function documentOf(read: HeldRead, text: string | null, etag: string): StoredText {
  const document = text === null ? read.documents.get(etag) : new StoredText(text, etag);
  if (!document) throw new Error(`PostgreSQL matched ${etag}, a tag the read did not send`);
  return document;
}

/**
 * Holds `documents` as what `read` was answered with, in place of what it
 * held. A HeldRead is never changed: a request still reading one that
 * another has replaced finds the documents it sent the tags of.
 */
export function hold(read: HeldRead, documents: readonly StoredText[], answer: HeldPage | null = null): void {
  const same = documents.length === read.documents.size && documents.every((d) => read.documents.get(d.etag) === d);
  if (same && (read.answer || !answer)) return;
  let reads = byStatement.get(read.text);
  if (!reads) byStatement.set(read.text, (reads = new Map()));
  const before = reads.get(read.key);
  if (before && recency.delete(before)) heldBytes -= before.bytes;
  const next: HeldRead = {
    text: read.text,
    key: read.key,
    documents: new Map(documents.map((d) => [d.etag, d.keep()])),
    // A tag is a quoted base64url string: only its quotes need escaping in the literal.
    tags: `{${documents.map((d) => `"${d.etag.replaceAll('"', '\\"')}"`).join(',')}}`,
    // A document's string, its bytes and its escaped bytes (StoredText); a page's own bytes and escaped bytes besides
    // (JsonText.keep), each at most about 1.2 times its bytes once escaped.
    bytes: documents.reduce((sum, d) => sum + (answer ? 5 : 3) * d.utf8!.length + 2 * d.text.length, READ_BYTES + 2 * read.key.length),
    answer,
  };
  reads.set(next.key, next);
  recency.add(next);
  heldBytes += next.bytes;
  for (const oldest of recency) {
    if (heldBytes <= HELD_BYTES) break;
    recency.delete(oldest);
    heldBytes -= oldest.bytes;
    const oldReads = byStatement.get(oldest.text)!;
    oldReads.delete(oldest.key);
    if (oldReads.size === 0) byStatement.delete(oldest.text);
  }
}
