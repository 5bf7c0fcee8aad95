// JSON that PostgreSQL already wrote (issue 12): a handler returns it, and the
// transports send the text on as it is, never parsing and re-serialising it.
import type { AnswerBufferPool } from './answer-bytes.ts';

export class JsonText {
  /** The JSON as pieces written one after another (one piece for text PostgreSQL wrote); joined only when asked. */
  readonly pieces: readonly Piece[];
  private joined: string | null;
  /** The fields it was written from, when JsonText.object wrote it (an answer's `data`, for its ETag). */
  readonly fields: Readonly<Record<string, unknown>> | null;
  /** A stored view's ETag, written with its text by the database (issue 29): the tag of exactly this text. */
  readonly etag: string | null;
  /** Its bytes and escaped bytes, once made, when they are cached to answer again (cacheBytes()). */
  private cached: { utf8: Buffer | null; escaped: Buffer | null } | null = null;
  /** `text`: the JSON, or the pieces that written one after another make it. */
  constructor(text: string | readonly Piece[], fields: Record<string, unknown> | null = null, etag: string | null = null) {
    this.pieces = typeof text === 'string' ? [text] : text;
    this.joined = typeof text === 'string' ? text : null;
    this.fields = fields;
    this.etag = etag;
  }

  /**
   * JSON written around other JSON (an envelope around a view) without
   * copying it into one string: a transport writes the pieces straight into
   * the bytes it sends (bytes()).
   */
  static concat(parts: ReadonlyArray<string | JsonText>): JsonText {
    // A JSON with cached bytes stays one piece: its bytes are made once.
    return new JsonText(parts.flatMap((part) => (part instanceof JsonText ? (part.cached ? [part] : part.pieces) : [part])));
  }

  /**
   * Marks it as answering again and again (a cached page, document-cache.ts):
   * its bytes, and its escaped bytes for MCP's text content, are then made
   * once and shared by every answer (never from the pool: nothing writes into them).
   */
  cacheBytes(): this {
    this.cached ??= { utf8: null, escaped: null };
    return this;
  }

  /** Its escaped bytes (no quotes) when its bytes are cached, or null: a quoted copy then escapes it piece by piece. */
  escapedBytes(): Buffer | null {
    if (!this.cached) return null;
    if (!this.cached.escaped) {
      const utf8 = this.cachedBytes();
      const scratch = Buffer.allocUnsafe(2 * utf8.length);
      const end = escapeBytesInto(scratch, 0, utf8);
      if (end < 0) return null;
      this.cached.escaped = Buffer.from(scratch.subarray(0, end));
    }
    return this.cached.escaped;
  }

  /**
   * `json`'s text as a JSON string, JSON.stringify(json.text) (MCP's
   * content[0].text), escaped only as bytes() writes it: measured on MCP's
   * list answers, JSON.stringify of the ~60 kB page was a sixth of the
   * service's time per call, escaping the page's UTF-8 bytes a third of that.
   */
  static quoted(json: JsonText): JsonText {
    return new JsonText([new QuotedJson(json)]);
  }

  get text(): string {
    return (this.joined ??= this.textPieces().join(''));
  }

  /** The text as the pieces that written one after another make it (a quoted piece as its JSON string). */
  textPieces(): string[] {
    return this.pieces.map(textOf);
  }

  /**
   * The UTF-8 bytes to send, each piece written into one buffer. Measured on
   * MCP's list answers (~130 kB: the view twice, once escaped): joining them
   * into one string first cost a third of the service's CPU, most of it in
   * garbage collection. `buffers`: the service's pool the buffer is borrowed
   * from (a JSON with cached bytes answers with those, never pooled).
   */
  bytes(buffers: AnswerBufferPool): Buffer {
    if (this.cached) return this.cachedBytes();
    return this.writtenBytes(buffers) ?? Buffer.from(this.text);
  }

  /** The cached bytes (cacheBytes()), made once (written into a buffer of their own: they are never released to the pool). */
  cachedBytes(): Buffer {
    this.cached!.utf8 ??= this.writtenBytes(null) ?? Buffer.from(this.text);
    return this.cached!.utf8;
  }

  /**
   * bytes(), or null when a quoted piece holds a character only JSON.stringify's
   * way escapes (never in JSON text); borrowed from `buffers`, or allocated without one.
   */
  private writtenBytes(buffers: AnswerBufferPool | null): Buffer | null {
    let room = 0;
    for (const piece of this.pieces) room += piece instanceof QuotedJson ? piece.room() : sizeOf(piece);
    const bytes = buffers ? buffers.borrow(room) : Buffer.allocUnsafe(room);
    let at = 0;
    for (const piece of this.pieces) {
      if (piece instanceof QuotedJson) at = piece.writeInto(bytes, at);
      else if (piece instanceof JsonText) at += piece.cachedBytes().copy(bytes, at);
      else if (piece instanceof StoredText && piece.utf8) at += piece.utf8.copy(bytes, at);
      else at += bytes.write(textOf(piece), at);
      if (at < 0) return null;
    }
    return at === room ? bytes : bytes.subarray(0, at);
  }

  /** The slow, correct path for code that stringifies an answer holding one (an idempotency record, a test). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }

  /** An object written around pieces of JSON text: `{"data":<view>}`. */
  static object(fields: Record<string, JsonText | unknown>): JsonText {
    const pieces: Piece[] = [];
    for (const [key, value] of Object.entries(fields)) {
      pieces.push(`${pieces.length ? ',' : '{'}${JSON.stringify(key)}:`);
      if (value instanceof JsonText) pieces.push(...value.pieces);
      else pieces.push(jsonOf(value));
    }
    pieces.push(pieces.length ? '}' : '{}');
    return new JsonText(pieces, fields);
  }
}

/** Text of any answer: JsonText as it is, anything else through JSON.stringify. */
export function jsonOf(value: unknown): string {
  return value instanceof JsonText ? value.text : JSON.stringify(value);
}

/** An answer as a value: JsonText parsed, anything else unchanged (for code that needs the object). */
export function valueOf<T>(value: T | JsonText): T {
  return value instanceof JsonText ? (JSON.parse(value.text) as T) : value;
}

/** An answer's `data` as a value, parsing only that part of an answer PostgreSQL wrote. */
export function dataOf(answer: unknown): unknown {
  if (answer instanceof JsonText) return valueOf(answer.fields ? answer.fields.data : (JSON.parse(answer.text) as { data: unknown }).data);
  return (answer as { data: unknown }).data;
}

/**
 * A stored view's text with its ETag, the SHA-256 of exactly this text
 * (issue 29): the tag names the text, so its escaped form can be cached.
 */
export class StoredText {
  readonly text: string;
  readonly etag: string;
  /** The text's UTF-8 bytes, once it is cached to answer again (document-cache.ts): an answer then copies them. */
  utf8: Buffer | null = null;
  /** Its escaped bytes (no quotes), once a quoted copy made them (MCP's text content), or false when only JSON.stringify can. */
  escaped: Buffer | false | null = null;
  constructor(text: string, etag: string) {
    this.text = text;
    this.etag = etag;
  }

  /** This text with its UTF-8 bytes, to be cached for later answers. */
  cacheBytes(): this {
    this.utf8 ??= Buffer.from(this.text);
    return this;
  }
}

/** A piece's UTF-8 length. */
function sizeOf(piece: string | StoredText | JsonText): number {
  if (piece instanceof JsonText) return piece.cachedBytes().length;
  return piece instanceof StoredText && piece.utf8 ? piece.utf8.length : Buffer.byteLength(textOf(piece));
}

/** A piece of a JsonText: text as it is, a stored view's text, a JSON with cached bytes, or another JSON's text as a JSON string. */
type Piece = string | StoredText | JsonText | QuotedJson;

function textOf(piece: Piece): string {
  if (typeof piece === 'string') return piece;
  if (piece instanceof StoredText || piece instanceof JsonText) return piece.text;
  return JSON.stringify(piece.json.text);
}

/**
 * A stored text's escaped bytes (no quotes), made once per text: MCP sends a
 * page twice, once escaped as a JSON string, and escaping ~60 kB was most of
 * what a tool call cost beyond its REST twin; pollers' documents are cached
 * (document-cache.ts), so a cached one is escaped once. Null when it holds a
 * character only JSON.stringify's way escapes.
 */
function escapedStored(piece: StoredText): Buffer | null {
  if (piece.escaped === null) {
    const scratch = Buffer.allocUnsafe(2 * sizeOf(piece));
    const end = piece.utf8 ? escapeBytesInto(scratch, 0, piece.utf8) : escapeInto(scratch, 0, piece.text);
    piece.escaped = end < 0 ? false : Buffer.from(scratch.subarray(0, end));
  }
  return piece.escaped || null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** The letter after the backslash for the control characters JSON text may hold raw (whitespace between tokens). */
const ESCAPED_WHITESPACE: Readonly<Record<number, number>> = { 0x09: 0x74, 0x0a: 0x6e, 0x0d: 0x72 };

/**
 * Writes `text` into `bytes` at `at` escaped as inside a JSON string, and
 * returns where it ends (-1 at a control character JSON text never holds
 * raw). Its UTF-8 bytes are written first where the escaped text may end at
 * most (at + its length) and escaped forward from `at`: the writing never
 * overtakes the reading (after n bytes read, at most 2n written), so one
 * buffer serves both. In JSON text only `"`, `\`, tab, newline and carriage
 * return need escaping, each to two bytes, as JSON.stringify escapes them;
 * UTF-8's other bytes (multi-byte sequences included) are copied as they are.
 */
function escapeInto(bytes: Buffer, at: number, text: string, size = Buffer.byteLength(text)): number {
  const from = at + size;
  return escapeInPlace(bytes, at, from, from + bytes.write(text, from));
}

/** escapeInto of UTF-8 bytes. */
function escapeBytesInto(bytes: Buffer, at: number, utf8: Buffer): number {
  const from = at + utf8.length;
  return escapeInPlace(bytes, at, from, from + utf8.copy(bytes, from));
}

/** Escapes bytes[from, end) forward to `at` (at <= from, room for twice their length). */
function escapeInPlace(bytes: Buffer, at: number, from: number, end: number): number {
  let to = at;
  for (let i = from; i < end; i++) {
    const byte = bytes[i];
    if (byte >= 0x20) {
      if (byte === QUOTE || byte === BACKSLASH) bytes[to++] = BACKSLASH;
      bytes[to++] = byte;
    } else {
      const letter = ESCAPED_WHITESPACE[byte];
      if (letter === undefined) return -1;
      bytes[to++] = BACKSLASH;
      bytes[to++] = letter;
    }
  }
  return to;
}

class QuotedJson {
  readonly json: JsonText;
  constructor(json: JsonText) {
    this.json = json;
  }

  /** Each piece's UTF-8 length, counted once by room() for writeInto(). */
  private sizes: number[] = [];

  /** The bytes the piece may take: every byte of the text escaped, and the quotes. */
  room(): number {
    const escaped = this.json.escapedBytes();
    if (escaped) return escaped.length + 2;
    this.sizes = this.json.pieces.map((piece) => (piece instanceof QuotedJson ? Buffer.byteLength(textOf(piece)) : sizeOf(piece)));
    return 2 * this.sizes.reduce((sum, size) => sum + size, 0) + 2;
  }

  /** Writes the text as a JSON string piece by piece (a stored text escaped once, StoredText.escaped); -1 as escapeInto. */
  writeInto(bytes: Buffer, at: number): number {
    let to = at;
    bytes[to++] = QUOTE;
    const escaped = this.json.escapedBytes();
    if (escaped) {
      to += escaped.copy(bytes, to);
      bytes[to++] = QUOTE;
      return to;
    }
    const { pieces } = this.json;
    for (let i = 0; i < pieces.length; i++) {
      const escapedOnce = pieces[i] instanceof StoredText ? escapedStored(pieces[i] as StoredText) : null;
      to = escapedOnce ? to + escapedOnce.copy(bytes, to) : escapeInto(bytes, to, textOf(pieces[i]), this.sizes[i]);
      if (to < 0) return -1;
    }
    bytes[to++] = QUOTE;
    return to;
  }
}
