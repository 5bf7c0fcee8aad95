// EXTENSIONS 10, token budgets: the input schema tools/list shows is what a
// model reads before every conversation, so it carries what an agent needs to
// call the tool (names, types, enums, required, formats, bounds that change
// what it asks for) and leaves out what only refuses mistakes an agent does
// not make in practice: the strict-date regular expression (the description
// says it), string length caps, minimum 0 (no count, price or weight is
// negative), the uuid format and a description that only names what an id
// identifies (the argument's and the tool's names say it: an agent passes ids
// it was given), and additionalProperties: false (an agent
// sends the arguments it is shown; another is refused). On a tool that creates
// (POST), an optional field's null branch goes too: there null says no more
// than leaving the field out. A minimum of 1 (a limit, a weight) goes like 0.
// Validation is unchanged: the same arguments are refused with the same words
// (validation.ts).
type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => !!value && typeof value === 'object' && !Array.isArray(value);

/** The ISO 8601 words a strict-date field's description starts with, unless it says so already. */
const DATE_WORDS = 'ISO 8601';
/** `Product id.`, `The webhook subscription id.`: says no more than the tool's name and the uuid format. */
const NAMES_AN_ID = /^(the )?[a-z ]+ id\.$/i;

export interface CompactOptions {
  /** The tool creates: a null branch says no more than an absent field. */
  creates?: boolean;
}

export function compactSchema(schema: unknown, options: CompactOptions = {}): unknown {
  if (Array.isArray(schema)) return schema.map((item) => compactSchema(item, options));
  if (!isRecord(schema)) return schema;
  const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]) : null;
  if (options.creates && branches?.length === 2 && branches.some((b) => b.type === 'null')) {
    const { anyOf: _branches, ...shared } = schema;
    return compactSchema({ ...shared, ...branches.find((b) => b.type !== 'null') }, options);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (
      key === 'maxLength' ||
      key === 'minLength' ||
      (key === 'additionalProperties' && value === false) ||
      (key === 'minimum' && (value === 0 || value === 1))
    )
      continue;
    if (key === 'pattern' && schema.format === 'strict-date') continue;
    if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, compactSchema(inner, options)]));
    } else if (key === 'format' && value === 'uuid') {
      continue;
    } else if (key === 'format' && value === 'strict-date') {
      const said = typeof schema.description === 'string' ? schema.description : '';
      out.description = said.includes('ISO 8601') ? said : said ? `${DATE_WORDS}: ${said}` : `${DATE_WORDS}.`;
    } else if (!(key === 'description' && (schema.format === 'strict-date' || (schema.format === 'uuid' && NAMES_AN_ID.test(String(value)))))) {
      out[key] = compactSchema(value, options);
    }
  }
  return out;
}
