// JSON compared by meaning, not by bytes: object keys sorted, numbers as
// JSON.parse reads them (so 3 and 3.0 are one value), whitespace gone. An
// explicit stack instead of recursion: any depth JSON.parse accepted works.
class Text {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [value];
  while (todo.length) {
    const item = todo.pop();
    if (item instanceof Text) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      const parts: unknown[] = [new Text('[')];
      item.forEach((element, i) => parts.push(...(i ? [new Text(',')] : []), element === undefined ? null : element));
      parts.push(new Text(']'));
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else if (item && typeof item === 'object') {
      const entries = Object.entries(item as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const parts: unknown[] = [new Text('{')];
      entries.forEach(([key, inner], i) => parts.push(new Text(`${i ? ',' : ''}${JSON.stringify(key)}:`), inner));
      parts.push(new Text('}'));
      for (let i = parts.length - 1; i >= 0; i--) todo.push(parts[i]);
    } else {
      out.push(JSON.stringify(item) ?? 'null');
    }
  }
  return out.join('');
}
