// JSON that PostgreSQL already wrote (issue 12): a handler returns it, and the
// transports send the text on as it is, never parsing and re-serialising it.
export class JsonText {
  readonly text: string;
  /** The fields it was written from, when JsonText.object wrote it (an answer's `data`, for its ETag). */
  readonly fields: Readonly<Record<string, unknown>> | null;
  constructor(text: string, fields: Record<string, unknown> | null = null) {
    this.text = text;
    this.fields = fields;
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
