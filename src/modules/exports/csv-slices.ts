// EXTENSIONS 8, CSV on PostgreSQL: the fields of a stored view that cost more
// to rebuild from the row than to cut out of its stored document (a jsonb
// document, which only a regular expression makes compact as the document
// holds it; an object read through the view's joins, the order's latest
// shipment). Such a field's JSON text is the document's text between its key
// and the next field's key, found with strpos, without parsing the document
// (json_to_record's records cost more than the rest of a row:
// bench/RESULTS-exports.md). In JSON text `,"k":` can only be an object's key
// k (a quote inside a string is escaped), so a key is found exactly when no
// other field's JSON can hold an object with that key: the declaration says
// which can (slicedFields), and a field that is not found so is read from
// the row (csv-cells.ts).
import type { View, ViewField } from '../../platform/read-path/index.ts';

/**
 * Value types whose JSON text never holds `,"` (row_to_json writes them as
 * to_json does): scalars, and jsonb, which PostgreSQL prints with a space
 * after every comma.
 */
const NO_OBJECT = new Set([
  'text',
  'character varying',
  'name',
  'uuid',
  'integer',
  'smallint',
  'bigint',
  'boolean',
  'numeric',
  'double precision',
  'real',
  'jsonb',
]);

/** Whether the field's JSON text may hold `,"key":` (an object with that key, not first). */
function mayHoldKey(field: ViewField, key: string, types: Map<string, string>): boolean {
  const parts = field.built;
  switch (parts.kind) {
    case 'number':
    case 'time':
      return false;
    case 'value': {
      const type = types.get(field.sql) ?? '';
      return !NO_OBJECT.has(type.endsWith('[]') ? type.slice(0, -2) : type);
    }
    case 'object':
      return Object.hasOwn(parts.fields, key) || Object.values(parts.fields).some((f) => mayHoldKey(f, key, types));
    case 'nullable':
      return mayHoldKey(parts.inner, key, types);
    default:
      return true;
  }
}

/** Whether a field is cut out of the document: a jsonb document, or an object that may be null (read through a join). */
function costly(field: ViewField): boolean {
  return field.built.kind === 'document' || field.built.kind === 'nullable';
}

/** The alias of the texts that follow each cut field's key in the row's document. */
const DOC = 'csv_doc';
/** The alias of the fields cut out of it. */
export const SLICES = 'csv_slices';

/** How the key of top-level field `index` is found in the document: its first occurrence, its last, or neither (null). */
function keyOccurrence(fields: ViewField[], keys: string[], index: number, types: Map<string, string>): 'first' | 'last' | null {
  const holds = (f: ViewField) => mayHoldKey(f, keys[index], types);
  if (!fields.slice(0, index).some(holds)) return 'first';
  if (!fields.slice(index).some(holds)) return 'last';
  return null;
}

const marker = (key: string) => `',"${key}":'`;

/**
 * The top-level fields cut out of the row's stored document, as one LATERAL
 * whose columns (named by the fields' keys) are their JSON texts; none for a
 * view built when read (its document is not stored). A field's text is what
 * follows its key (after the first occurrence: substr from strpos; after the
 * last: split_part's last part) up to the next field's key, or to the
 * document's closing brace. strpos and split_part search for the key's text
 * without parsing anything, where reversing the document to find a key's
 * last occurrence cost as much as json_to_record.
 */
export function slicedFields(view: View, types: Map<string, string>): { keys: string[]; lateral: string } {
  const keys = Object.keys(view.fields);
  const fields = Object.values(view.fields);
  const follows: string[] = [];
  const slices: string[] = [];
  if (!view.stored) return { keys: [], lateral: '' };
  for (const [index, field] of fields.entries()) {
    // The first key follows `{`, not `,`: such a field is read from the row.
    if (index === 0 || !costly(field)) continue;
    const own = keyOccurrence(fields, keys, index, types);
    const next = index + 1 < fields.length ? keyOccurrence(fields, keys, index + 1, types) : 'end';
    if (!own || !next) continue;
    const key = marker(keys[index]);
    const after = `${DOC}."${keys[index]}"`;
    follows.push(`${own === 'first' ? `substr(d, strpos(d, ${key}) + ${key.length - 2})` : `split_part(d, ${key}, -1)`} AS "${keys[index]}"`);
    const nextKey = next === 'end' ? '' : marker(keys[index + 1]);
    const text =
      next === 'end'
        ? `left(${after}, -1)`
        : next === 'first'
          ? `split_part(${after}, ${nextKey}, 1)`
          : `left(${after}, -(length(split_part(${after}, ${nextKey}, -1)) + ${nextKey.length - 2}))`;
    slices.push(`${text} AS "${keys[index]}"`);
  }
  if (!slices.length) return { keys: [], lateral: '' };
  // Each OFFSET 0 keeps its subquery whole: the document and what follows each key are read once a row.
  const doc = `(SELECT ${follows.join(', ')} FROM (SELECT ${view.read.json} AS d OFFSET 0) csv_text OFFSET 0) ${DOC}`;
  return {
    keys: slices.map((s) => /AS "([^"]+)"$/.exec(s)![1]),
    lateral: `CROSS JOIN LATERAL (SELECT ${slices.join(', ')} FROM ${doc} OFFSET 0) ${SLICES}`,
  };
}
