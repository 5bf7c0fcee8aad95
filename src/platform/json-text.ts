// JSON that PostgreSQL already wrote (issue 12): a handler returns it, and the
// transports send the text on as it is, never parsing and re-serialising it.
import { takeAnswerBytes } from './answer-bytes.ts';

export class JsonText {
  /** The JSON as pieces written one after another (one piece for text PostgreSQL wrote); joined only when asked. */
  private readonly pieces: readonly Piece[];
  private joined: string | null;
  /** The fields it was written from, when JsonText.object wrote it (an answer's `data`, for its ETag). */
  readonly fields: Readonly<Record<string, unknown>> | null;
  /** A stored view's ETag, written with its text by the database (issue 29): the tag of exactly this text. */
  readonly etag: string | null;
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
    return new JsonText(parts.flatMap((part) => (part instanceof JsonText ? part.pieces : [part])));
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
    return this.pieces.map((piece) => (typeof piece === 'string' ? piece : JSON.stringify(piece.json.text)));
  }

  /**
   * The UTF-8 bytes to send, each piece written into one buffer. Measured on
   * MCP's list answers (~130 kB: the view twice, once escaped): joining them
   * into one string first cost a third of the service's CPU, most of it in
   * garbage collection.
   */
  bytes(): Buffer {
    return this.writtenBytes() ?? Buffer.from(this.text);
  }

  /** bytes(), or null when a quoted piece holds a character only JSON.stringify's way escapes (never in JSON text). */
  private writtenBytes(): Buffer | null {
    let room = 0;
    for (const piece of this.pieces) room += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.room();
    const bytes = takeAnswerBytes(room);
    let at = 0;
    for (const piece of this.pieces) {
      at = typeof piece === 'string' ? at + bytes.write(piece, at) : piece.writeInto(bytes, at);
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
    const parts = Object.entries(fields).map(([key, value]) => `${JSON.stringify(key)}:${jsonOf(value)}`);
    return new JsonText(`{${parts.join(',')}}`, fields);
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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** The letter after the backslash for the control characters JSON text may hold raw (whitespace between tokens). */
const ESCAPED_WHITESPACE: Readonly<Record<number, number>> = { 0x09: 0x74, 0x0a: 0x6e, 0x0d: 0x72 };

/** A piece of a JsonText: text as it is, or another JSON's text as a JSON string. */
type Piece = string | QuotedJson;

class QuotedJson {
  readonly json: JsonText;
  private size = 0;
  constructor(json: JsonText) {
    this.json = json;
  }

  /** The bytes the piece may take: every byte of the text escaped, and the quotes. */
  room(): number {
    this.size = 0;
    for (const piece of this.json.textPieces()) this.size += Buffer.byteLength(piece);
    return 2 * this.size + 2;
  }

  /**
   * Writes the text's UTF-8 bytes into the back half of the piece's room and
   * escapes them forward from `at`: the writing never overtakes the reading
   * (after n bytes read, at most 2n + 1 written), so one buffer serves both.
   * In JSON text only `"`, `\`, tab, newline and carriage return need escaping,
   * each to two bytes, as JSON.stringify escapes them; UTF-8's other bytes
   * (multi-byte sequences included) are copied as they are. Returns where the
   * piece ends, or -1 at any other control character.
   */
  writeInto(bytes: Buffer, at: number): number {
    const from = at + this.size + 2;
    let end = from;
    for (const piece of this.json.textPieces()) end += bytes.write(piece, end);
    let to = at;
    bytes[to++] = QUOTE;
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
    bytes[to++] = QUOTE;
    return to;
  }
}
