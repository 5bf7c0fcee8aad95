// JSON compared by meaning, not by bytes: object keys sorted, numbers as
// JSON.parse reads them (so 3 and 3.0 are one value), whitespace gone.
//
// Every answer that serves a versioned resource, on REST and MCP, hashes its
// view this way for its ETag (etag.ts), so this is on the read path: one
// recursive walk appending to a string, with JSON.stringify only for strings
// that need escaping. The walk before it (a stack of pieces, JSON.stringify
// per value) took 26-36 µs per 1.4 kB order view, this one 10-12 µs (a loop
// over 20 views); the service's CPU per GET by id is in
// bench/RESULTS-read-path.md. Below MAX_RECURSION levels the walk recurses;
// deeper (a request body may nest as deep as JSON.parse allows) it goes on
// with an explicit stack.

/** A string JSON.stringify would write other than as `"` + string + `"`: quotes, backslashes, control characters, surrogates. */
// oxlint-disable-next-line no-control-regex -- the control characters are what needs escaping
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;
const MAX_RECURSION = 200;

export function canonicalJson(value: unknown): string {
  return canonical(value, 0);
}

function canonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return NEEDS_ESCAPING.test(value) ? JSON.stringify(value) : `"${value}"`;
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (depth >= MAX_RECURSION) return deepCanonicalJson(value);
      return Array.isArray(value) ? canonicalArray(value, depth + 1) : canonicalObject(value as Record<string, unknown>, depth + 1);
    default:
      return JSON.stringify(value) ?? 'null';
  }
}

function canonicalArray(array: unknown[], depth: number): string {
  let text = '[';
  for (let i = 0; i < array.length; i++) {
    if (i) text += ',';
    text += array[i] === undefined ? 'null' : canonical(array[i], depth);
  }
  return `${text}]`;
}

function canonicalObject(object: Record<string, unknown>, depth: number): string {
  let text = '{';
  let separator = '';
  for (const key of Object.keys(object).sort()) {
    const inner = object[key];
    if (inner === undefined) continue;
    text += `${separator}${canonical(key, depth)}:${canonical(inner, depth)}`;
    separator = ',';
  }
  return `${text}}`;
}

class Text {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** The same output, without recursion: for values nested deeper than MAX_RECURSION. */
function deepCanonicalJson(value: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [value];
  while (todo.length) {
    const item = todo.pop();
    if (item instanceof Text) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      const parts: unknown[] = [new Text('[')];
      for (let i = 0; i < item.length; i++) {
        if (i) parts.push(new Text(','));
        parts.push(item[i] === undefined ? null : item[i]);
      }
      parts.push(new Text(']'));
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else if (item && typeof item === 'object') {
      const entries = Object.keys(item)
        .sort()
        .map((key) => [key, (item as Record<string, unknown>)[key]] as const)
        .filter(([, v]) => v !== undefined);
      const parts: unknown[] = [new Text('{')];
      entries.forEach(([key, inner], i) => parts.push(new Text(`${i ? ',' : ''}${canonical(key, 0)}:`), inner));
      parts.push(new Text('}'));
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else {
      out.push(canonical(item, 0));
    }
  }
  return out.join('');
}
