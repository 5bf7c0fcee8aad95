// Tool schemas in the most portable spelling of JSON Schema. The MCP
// Inspector's --strict report, and function-calling dialects that map a
// schema onto one `type` per node (Gemini's OpenAPI subset, for one), warn
// about two spellings our TypeBox schemas use:
// - a `type` array (nullable fields, `['string', 'null']`): written as
//   `anyOf` branches with one type each, type-specific keywords in their branch;
// - `patternProperties: {"^.*$": {}}` (TypeBox's Record of unknown): written
//   as `additionalProperties`, which says the same for every key.
// The meaning is unchanged: the same values validate.

const KEYWORDS_OF: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  object: ['properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties', 'propertyNames'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains'],
  boolean: [],
  null: [],
};
const ANY_KEY = new Set(['^.*$', '^(.*)$', '.*', '']);

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => !!value && typeof value === 'object' && !Array.isArray(value);

/** The JSON type names a value belongs to (an integer is also a number). */
function typesOf(value: unknown): string[] {
  if (value === null) return ['null'];
  if (Array.isArray(value)) return ['array'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number'];
  return [typeof value];
}

/** One `anyOf` branch per type; each keeps the keywords and enum values of its own type. */
function splitTypes(schema: Json, types: string[]): Json {
  const shared: Json = {};
  const specific = new Set(types.flatMap((t) => KEYWORDS_OF[t] ?? []));
  for (const [key, value] of Object.entries(schema)) {
    if (key !== 'type' && key !== 'enum' && !specific.has(key)) shared[key] = value;
  }
  const branches = types
    .map((type) => {
      const branch: Json = { type };
      for (const key of KEYWORDS_OF[type] ?? []) if (key in schema) branch[key] = schema[key];
      if (Array.isArray(schema.enum)) {
        const values = schema.enum.filter((v) => typesOf(v).includes(type));
        if (type === 'null') return values.length ? branch : null;
        branch.enum = values;
        if (!values.length) return null;
      }
      return branch;
    })
    .filter((b): b is Json => b !== null);
  return { ...shared, anyOf: branches.map(portableSchema) };
}

export function portableSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(portableSchema);
  if (!isRecord(schema)) return schema;
  if (Array.isArray(schema.type)) {
    const types = schema.type as string[];
    if (types.length === 1) return portableSchema({ ...schema, type: types[0] });
    return splitTypes(schema, types);
  }
  const patterns = schema.patternProperties;
  // A pattern that every key matches leaves nothing to additionalProperties: it takes its place.
  const anyKey = isRecord(patterns) && Object.keys(patterns).length === 1 && ANY_KEY.has(Object.keys(patterns)[0]);
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, portableSchema(s)]));
    } else if (anyKey && key === 'patternProperties') {
      const [inner] = Object.values(value as Json);
      out.additionalProperties = isRecord(inner) && Object.keys(inner).length === 0 ? true : portableSchema(inner);
    } else if (!(anyKey && key === 'additionalProperties')) {
      out[key] = portableSchema(value);
    }
  }
  return out;
}
