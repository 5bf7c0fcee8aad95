// JSON that PostgreSQL already wrote (issue 12): a handler returns it, and the
// transports send the text on as it is, never parsing and re-serialising it.
export class JsonText {
  /** The JSON as pieces written one after another (one piece for text PostgreSQL wrote); joined only when asked. */
  private readonly pieces: readonly string[];
  private joined: string | null;
  /** The fields it was written from, when JsonText.object wrote it (an answer's `data`, for its ETag). */
  readonly fields: Readonly<Record<string, unknown>> | null;
  /** `text`: the JSON, or the pieces that written one after another make it. */
  constructor(text: string | readonly string[], fields: Record<string, unknown> | null = null) {
    this.pieces = typeof text === 'string' ? [text] : text;
    this.joined = typeof text === 'string' ? text : null;
    this.fields = fields;
  }

  /**
   * JSON written around other JSON (an envelope around a view) without
   * copying it into one string: a transport writes the pieces straight into
   * the bytes it sends (bytes()).
   */
  static concat(parts: ReadonlyArray<string | JsonText>): JsonText {
    return new JsonText(parts.flatMap((part) => (part instanceof JsonText ? part.pieces : [part])));
  }

  get text(): string {
    return (this.joined ??= this.pieces.join(''));
  }

  /**
   * The UTF-8 bytes to send, each piece written into one buffer. Measured on
   * MCP's list answers (~130 kB: the view twice, once escaped): joining them
   * into one string first cost a third of the service's CPU, most of it in
   * garbage collection.
   */
  bytes(): Buffer {
    let size = 0;
    for (const piece of this.pieces) size += Buffer.byteLength(piece);
    const bytes = Buffer.allocUnsafe(size);
    let at = 0;
    for (const piece of this.pieces) at += bytes.write(piece, at);
    return bytes;
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
