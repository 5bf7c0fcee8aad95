// EXTENSIONS 10, fields: a read names the fields it wants and gets only those
// (plus the object's identifier), so an agent does not spend its context on
// fields it never reads. Declared on the operation (`fields: {id}`); the
// registry adds the `fields` parameter to its query (REST, MCP, OpenAPI), and
// the pipeline projects the answer. Without `fields` nothing here runs: the
// answer stays the bytes PostgreSQL wrote, its ETag and its speed unchanged.
// With it, the answer is parsed and written again (JSON.parse of a page of 50
// orders is well under a millisecond) and carries no ETag.
import { Type, type TObject, type TSchema } from 'typebox';
import { AppError } from './errors.ts';
import { JsonText, valueOf } from '../read-path/json-text.ts';

/** An operation whose answer's `data` objects can be projected: the field always kept. */
export interface Projectable {
  /** The identifier kept whatever is asked: `id`, a customer's `key`, a stock item's `product_id`. */
  id: string;
}

/** Short: twelve tools carry it (EXTENSIONS 10 token budgets); docs/mcp.md says the rest. */
export const FIELDS_DESCRIPTION = 'Fields to return, e.g. id,status,customer.name';

export const FieldsParam = () => Type.String({ minLength: 1, maxLength: 2000, description: FIELDS_DESCRIPTION });

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => !!value && typeof value === 'object' && !Array.isArray(value);
/** Whether the schema admits that JSON type (`type` may be a list: a nullable field). */
const admitsType = (schema: Json, type: string) => (Array.isArray(schema.type) ? schema.type.includes(type) : schema.type === type);

/** The object schema inside `schema`: itself, its array's items, or the object branch of a union (nullable). */
function objectIn(schema: unknown): Json | undefined {
  if (!isRecord(schema)) return undefined;
  if (admitsType(schema, 'array')) return objectIn(schema.items);
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map(objectIn).find(Boolean);
  return admitsType(schema, 'object') && isRecord(schema.properties) && Object.keys(schema.properties).length ? schema : undefined;
}

/** A non-array object field's own object schema (a dotted name reaches into it), or undefined. */
function subObject(schema: unknown): Json | undefined {
  if (!isRecord(schema) || admitsType(schema, 'array')) return undefined;
  if (Array.isArray(schema.anyOf) && schema.anyOf.some((branch) => isRecord(branch) && admitsType(branch, 'array'))) return undefined;
  return objectIn(schema);
}

/** What was asked: each top-level field in schema order, with the sub-fields asked of it (null: all of it). */
export type Selection = Array<[name: string, sub: string[] | null]>;

/** The item schema of an operation's answer: the object its `data` holds or lists. */
export function itemSchemaOf(output: TSchema): Json {
  const data = (output as TObject).properties?.data;
  const item = objectIn(data);
  if (!item) throw new Error('a projectable operation answers {data: object or array of objects}');
  return item;
}

/** Every name `fields` may use for these items, in schema order: top-level names, then `name.sub` for object fields. */
export function allowedFields(item: Json): string[] {
  const names: string[] = [];
  for (const [name, schema] of Object.entries(item.properties as Json)) {
    names.push(name);
    const sub = subObject(schema);
    if (sub) names.push(...Object.keys(sub.properties as Json).map((inner) => `${name}.${inner}`));
  }
  return names;
}

/** Reads `fields` against the item schema; an unknown name is 400 validation_failed naming what is allowed. */
export function parseFields(raw: string, item: Json, projectable: Projectable): Selection {
  const allowed = allowedFields(item);
  const asked = raw.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !allowed.includes(name));
  if (unknown.length || asked.length === 0) {
    const named = unknown.map((name) => (name === '' ? '(empty)' : name)).join(', ');
    throw new AppError('validation_failed', `fields: unknown field ${named}`, { allowed });
  }
  const wanted = new Map<string, string[] | null>([[projectable.id, null]]);
  for (const name of asked) {
    const [top, inner] = name.split('.', 2);
    if (inner === undefined) wanted.set(top, null);
    else if (wanted.get(top) !== null) wanted.set(top, [...(wanted.get(top) ?? []), inner]);
  }
  // SPEC's order: the schema's, for the fields and for the sub-fields.
  return Object.keys(item.properties as Json)
    .filter((name) => wanted.has(name))
    .map((name) => {
      const sub = wanted.get(name)!;
      const order = sub && Object.keys(subObject((item.properties as Json)[name])!.properties as Json);
      return [name, sub && order.filter((inner) => sub.includes(inner))];
    });
}

function projectObject(value: unknown, selection: Selection): unknown {
  if (!isRecord(value)) return value;
  const out: Json = {};
  for (const [name, sub] of selection) {
    if (!(name in value)) continue;
    const field = value[name];
    out[name] = sub && isRecord(field) ? Object.fromEntries(sub.filter((inner) => inner in field).map((inner) => [inner, field[inner]])) : field;
  }
  return out;
}

/** The answer with its `data` object(s) projected; everything beside `data` (paging) kept as it was. */
export function projectAnswer(answer: unknown, selection: Selection): JsonText {
  const value = valueOf(answer) as Json;
  const data = value.data;
  const projected = { ...value, data: Array.isArray(data) ? data.map((item) => projectObject(item, selection)) : projectObject(data, selection) };
  return new JsonText(JSON.stringify(projected));
}

/** The query an operation with `fields` takes: its own, plus `fields`. */
export function withFieldsParam(query: TObject | undefined): TObject {
  const properties = { ...(query?.properties ?? {}), fields: Type.Optional(FieldsParam()) };
  const { properties: _, ...options } = (query ?? {}) as Json;
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/**
 * The answer's schema as `fields` leaves it: the same types and closed
 * objects, with no required list (a projected object has only what was asked
 * and its identifier). MCP's outputSchema admits it beside the full answer.
 */
export function withoutRequired(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutRequired);
  if (!isRecord(schema)) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, inner]) => !(key === 'required' && Array.isArray(inner)))
      .map(([key, inner]) => [key, key === 'enum' ? inner : withoutRequired(inner)]),
  );
}
