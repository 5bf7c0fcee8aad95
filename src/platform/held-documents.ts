// The stored documents (issue 29) this instance answered a read with last,
// by the read: pollers ask the same statement with the same parameters again
// and again, and most documents have not changed since. The read sends the
// ETags of the documents it holds, PostgreSQL sends back a document's text
// only where the row's tag differs (NULL where it matches), and the answer
// takes the held text, whose UTF-8 bytes are kept with it. What decides
// freshness is the comparison in the statement itself, in its snapshot: a
// held text is used only for a row whose stored tag, the SHA-256 of its
// text, is the held one. An instance holds its own; another instance or a
// restart starts empty and is answered in full.
import { StoredText } from './json-text.ts';

/** A bound on the texts held, counted as their UTF-8 bytes and their strings (two bytes a character, at most). */
const HELD_BYTES = 32 * 1024 * 1024;

/** One read (a statement text and its parameters) and the documents it was answered with last, by their tags. */
export interface HeldRead {
  readonly text: string;
  readonly key: string;
  readonly documents: ReadonlyMap<string, StoredText>;
  /** The tags to send with the read. */
  readonly tags: readonly string[];
  readonly bytes: number;
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
  if (!read) return { text, key, documents: new Map(), tags: [], bytes: 0 };
  recency.delete(read);
  recency.add(read);
  return read;
}

/**
 * A row of a read that sent `read`'s tags: its text as PostgreSQL sent it
 * (null where the tag matched one held), and its tag. Null when a held
 * document is missing, which a read that sent only held tags never sees.
 */
export function documentOf(read: HeldRead, text: string | null, etag: string): StoredText | null {
  return text === null ? (read.documents.get(etag) ?? null) : new StoredText(text, etag);
}

/**
 * Holds `documents` as what `read` was answered with, in place of what it
 * held. A HeldRead is never changed: a request still reading one that
 * another has replaced finds the documents it sent the tags of.
 */
export function hold(read: HeldRead, documents: readonly StoredText[]): void {
  if (documents.length === read.documents.size && documents.every((d) => read.documents.get(d.etag) === d)) return;
  let reads = byStatement.get(read.text);
  if (!reads) byStatement.set(read.text, (reads = new Map()));
  const before = reads.get(read.key);
  if (before && recency.delete(before)) heldBytes -= before.bytes;
  const next: HeldRead = {
    text: read.text,
    key: read.key,
    documents: new Map(documents.map((d) => [d.etag, d.keep()])),
    tags: documents.map((d) => d.etag),
    bytes: documents.reduce((sum, d) => sum + d.utf8!.length + 2 * d.text.length, 0),
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
