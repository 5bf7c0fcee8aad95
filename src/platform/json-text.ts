// JSON that PostgreSQL already wrote (issue 12): a handler returns it, and the
// transports send the text on as it is, never parsing and re-serialising it.
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }

  /** The slow, correct path for code that stringifies an answer holding one (an idempotency record, a test). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }

  /** An object written around pieces of JSON text: `{"data":<view>}`. */
  static object(fields: Record<string, JsonText | unknown>): JsonText {
    const parts = Object.entries(fields).map(([key, value]) => `${JSON.stringify(key)}:${jsonOf(value)}`);
    return new JsonText(`{${parts.join(',')}}`);
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
