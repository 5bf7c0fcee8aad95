// Schemas that carry a $id (Order, Shipment, ...) are named components in
// OpenAPI; the serialiser and the validators want them inlined and nameless.
import type { TSchema } from 'typebox';

export function serializableSchema(schema: TSchema): object {
  return strip(schema) as object;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$id') continue;
      out[key] = strip(inner);
    }
    return out;
  }
  return value;
}

/**
 * Replaces every sub-schema that has a $id with a $ref to
 * #/components/schemas/<id>, collecting the definitions in `components`.
 */
export function withComponentRefs(schema: unknown, components: Record<string, unknown>, isRoot = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withComponentRefs(s, components, false));
  if (!schema || typeof schema !== 'object') return schema;
  const record = schema as Record<string, unknown>;
  if (typeof record.$id === 'string' && !isRoot) {
    const name = record.$id;
    if (!components[name]) {
      components[name] = {}; // reserve first: recursive schemas terminate
      components[name] = withComponentRefs(record, components, true);
    }
    return { $ref: `#/components/schemas/${name}` };
  }
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(record)) {
    if (key === '$id') continue;
    out[key] = withComponentRefs(inner, components, false);
  }
  return out;
}
