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

/** What one read held last: its documents by their tags. */
export type HeldDocuments = ReadonlyMap<string, StoredText>;

const NONE: HeldDocuments = new Map();

/** A bound on the texts held, counted as their UTF-8 bytes and their strings (two bytes a character, at most). */
const HELD_BYTES = 32 * 1024 * 1024;

interface Held {
  documents: HeldDocuments;
  bytes: number;
}

/**
 * Per statement text (the same string instance each time: read-sql.ts keeps
 * them), per parameters. Least recently used out first past HELD_BYTES.
 */
const byStatement = new Map<string, Map<string, Held>>();
/** Every held read in the order last used: [statement, parameters]. */
const recency = new Map<Held, [string, string]>();
let heldBytes = 0;

const parametersKey = (params: readonly unknown[]) => JSON.stringify(params);

/** The documents `text` with `params` was answered with last (empty the first time). */
export function heldFor(text: string, params: readonly unknown[]): HeldDocuments {
  const held = byStatement.get(text)?.get(parametersKey(params));
  if (!held) return NONE;
  recency.delete(held);
  recency.set(held, [text, parametersKey(params)]);
  return held.documents;
}

/**
 * A row of a read that sent `held`'s tags: its text as PostgreSQL sent it
 * (null where the tag matched one held), and its tag. Null when a held
 * document is missing, which a read that sent only held tags never sees.
 */
export function documentOf(held: HeldDocuments, text: string | null, etag: string): StoredText | null {
  return text === null ? (held.get(etag) ?? null) : new StoredText(text, etag);
}

/** Holds `documents` as what `text` with `params` answered, in place of what it held. */
export function hold(text: string, params: readonly unknown[], documents: readonly StoredText[]): void {
  const key = parametersKey(params);
  let reads = byStatement.get(text);
  if (!reads) byStatement.set(text, (reads = new Map()));
  const before = reads.get(key);
  if (before) forget(before);
  const held: Held = { documents: new Map(documents.map((d) => [d.etag, d.keep()])), bytes: 0 };
  for (const d of documents) held.bytes += d.utf8!.length + 2 * d.text.length;
  reads.set(key, held);
  recency.set(held, [text, key]);
  heldBytes += held.bytes;
  for (const [oldest, [oldText, oldKey]] of recency) {
    if (heldBytes <= HELD_BYTES) break;
    forget(oldest);
    const oldReads = byStatement.get(oldText)!;
    oldReads.delete(oldKey);
    if (oldReads.size === 0) byStatement.delete(oldText);
  }
}

function forget(held: Held): void {
  recency.delete(held);
  heldBytes -= held.bytes;
}

/** The tags to send with a read: those of what it held. */
export function tagsOf(held: HeldDocuments): string[] {
  return [...held.keys()];
}
