// EXTENSIONS 8, CSV: RFC 4180 (CRLF line ends; a field holding a comma, a
// quote, CR or LF is quoted, its quotes doubled), a header row, then one row a
// record. Columns come from the record's schema in SPEC's field order: a
// scalar as its text (numbers and booleans as their JSON text), a nested
// object whose fields SPEC lists flattened with a dot (customer.name,
// shipment.status), any other object or array as one cell of JSON text, null
// as an empty cell. This lays out the rows PGlite reads; on PostgreSQL the
// database writes the same bytes (csv-copy.ts).
import type { TSchema } from 'typebox';

/** A column: its header and where its value is in a record. */
export interface Column {
  name: string;
  path: string[];
  /** Its schema allows a number and no string: its JSON text is a number's. */
  number: boolean;
  /** Its schema allows a string and a number (a jsonb value, e.g. an office id): only its JSON says which it holds. */
  mixed: boolean;
}

/** An object schema with listed fields (possibly nullable: anyOf [object, null]), or null. */
function listedFields(schema: any): Record<string, TSchema> | null {
  const object = schema?.anyOf ? schema.anyOf.find((s: any) => s.type === 'object') : schema;
  if (object?.type !== 'object' || !object.properties || object.additionalProperties !== false) return null;
  return object.properties;
}

function typesOf(schema: any): string[] {
  return [schema?.type, ...(schema?.anyOf ?? []).map((s: any) => s.type)].flat();
}

function isNumber(schema: any): boolean {
  const types = typesOf(schema);
  return types.includes('number') && !types.includes('string');
}

function isMixed(schema: any): boolean {
  const types = typesOf(schema);
  return types.includes('string') && (types.includes('number') || types.includes('integer'));
}

export function csvColumns(record: TSchema): Column[] {
  const columns: Column[] = [];
  const walk = (fields: Record<string, TSchema>, path: string[]) => {
    for (const [name, schema] of Object.entries(fields)) {
      const nested = listedFields(schema);
      if (nested) walk(nested, [...path, name]);
      else columns.push({ name: [...path, name].join('.'), path: [...path, name], number: isNumber(schema), mixed: isMixed(schema) });
    }
  };
  walk(listedFields(record) ?? {}, []);
  return columns;
}

const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function cellOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return csvField(value);
  if (typeof value === 'object') return csvField(JSON.stringify(value));
  return String(value);
}

export function csvHeader(columns: Column[]): string {
  return `${columns.map((c) => csvField(c.name)).join(',')}\r\n`;
}

/** One record's row, from its JSON text. */
export function csvRow(columns: Column[], json: string): string {
  const record = JSON.parse(json);
  const cells = columns.map((column) => {
    let value: any = record;
    for (const key of column.path) value = value == null ? null : value[key];
    return cellOf(value);
  });
  return `${cells.join(',')}\r\n`;
}
