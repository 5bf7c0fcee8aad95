// A view declared once (issue 29): each field names its SQL and its schema
// together, and from that one declaration follow the contract's TypeBox
// schema, the SQL that writes the view as JSON, and, for a stored view, the
// database's upkeep of it: the document and its ETag stored in two columns of
// the row, written by a trigger in the transaction of any change (the API,
// the operator API, a migration, a SQL console), and refreshed when a row
// of a table the view reads (an order's shipments) changes. Reads select the
// stored text: no JSON is built and no hash computed when a view is read.
// The upkeep SQL is checked in as a migration (view-migrations.ts), and a
// row written by an older declaration is read as built from the row until
// the backfill rewrites it (view-upkeep.ts).
import crypto from 'node:crypto';
import type { Static, TObject, TSchema, TUnsafe } from 'typebox';
import { Closed } from '../contract/schema.ts';
import { isoTime, jsonArray, jsonNumber, jsonObject, type JsonView } from './json-view.ts';

/** One field of a view: the SQL expression PostgreSQL writes as its JSON, and the contract's schema of it. */
export interface ViewField<S extends TSchema = TSchema> {
  readonly sql: string;
  readonly schema: S;
}

export type ViewFields = Record<string, ViewField>;
type SchemaOf<F extends ViewFields> = { [K in keyof F]: F[K]['schema'] };

/**
 * The kinds of field: how PostgreSQL must spell each so that the JSON is
 * byte for byte what JSON.stringify printed before (src/platform/read-path/json-view.ts).
 */
export const field = {
  /** A column whose JSON PostgreSQL already spells as JavaScript does: text, integer, boolean, uuid, json. */
  value: <S extends TSchema>(sql: string, schema: S): ViewField<S> => ({ sql, schema }),
  /** A numeric amount, as JavaScript prints the number (12.5, not 12.50). */
  number: <S extends TSchema>(sql: string, schema: S): ViewField<S> => ({ sql: jsonNumber(sql), schema }),
  /** A timestamp as Date#toISOString prints it. */
  time: <S extends TSchema>(sql: string, schema: S): ViewField<S> => ({ sql: isoTime(sql), schema }),
  /** A jsonb document, compact (jsonb prints spaces; JSON.stringify does not) and with JavaScript's numbers. */
  document: <S extends TSchema>(sql: string, schema: S): ViewField<S> => ({ sql: `merx_compact_json(${sql})`, schema }),
  /** A closed object of fields, in their declared order. */
  object<F extends ViewFields>(fields: F, options: Record<string, unknown> = {}): ViewField<TObject<SchemaOf<F>>> {
    return { sql: jsonObject(sqlOf(fields)), schema: Closed(schemaOf(fields), options) };
  },
  /** `inner`, or null when `nullWhen` holds (a join that found no row). */
  nullable<S extends TSchema>(nullWhen: string, inner: ViewField<S>, schema: TUnsafe<Static<S> | null>): ViewField<TUnsafe<Static<S> | null>> {
    return { sql: `CASE WHEN ${nullWhen} THEN NULL ELSE ${inner.sql} END`, schema };
  },
  /** An array of `item`, one per row of `from` (a table and its condition), in `orderBy` order; [] when none. */
  array<S extends TSchema, A extends TSchema>(item: ViewField<S>, from: string, orderBy: string, schema: A): ViewField<A> {
    return { sql: jsonArray(item.sql, from, orderBy), schema };
  },
};

function sqlOf(fields: ViewFields): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([key, f]) => [key, f.sql]));
}

function schemaOf<F extends ViewFields>(fields: F): SchemaOf<F> {
  return Object.fromEntries(Object.entries(fields).map(([key, f]) => [key, f.schema])) as SchemaOf<F>;
}

/**
 * A table whose rows the view reads (through `joins` or a field's subquery):
 * a row inserted or deleted, or a change to one of `columns`, refreshes the
 * documents of the rows `match` names (view column = that table's column),
 * e.g. an order's shipments. Only those columns: a change the view cannot
 * see (the shipment's own document being written) must not lock and rewrite
 * the order (a backfill of shipments would rewrite every order).
 */
export interface ViewSource {
  table: string;
  match: Record<string, string>;
  columns: string[];
}

export interface ViewDeclaration<F extends ViewFields> {
  /** Lower-case, one word: names the trigger functions (merx_view_<name>). */
  name: string;
  /** The table whose row the view shows, and the alias every field's SQL uses for it. */
  table: string;
  alias: string;
  /** LATERAL joins the fields read (the latest shipment). */
  joins?: string;
  fields: F;
  /** Options of the contract schema ($id, description). */
  schema?: Record<string, unknown>;
  /** Stored as a document in the row (the views pollers list at volume); others are built when read. */
  stored?: { sources?: ViewSource[] };
}

export interface View<F extends ViewFields = ViewFields> {
  readonly name: string;
  readonly table: string;
  /** The contract's schema of the view. */
  readonly schema: TObject<SchemaOf<F>>;
  /**
   * How the view is read: for a stored view, the stored document when the row's
   * version is this declaration's, else the JSON built from the row (a row the
   * backfill has not reached yet after a change); a view built when read: the JSON.
   */
  readonly read: JsonView;
  /** The JSON built from the row as it is now: what the stored document must always equal. */
  readonly built: JsonView;
  readonly stored: boolean;
  /** Which declaration wrote a stored document: a hash of the SQL that builds it, stored in the row beside it. */
  readonly version: string;
  /** A stored view's upkeep in SQL (columns, triggers, its stored_views row), idempotent; empty for a view built when read. */
  readonly upkeepSql: string;
}

/** The two columns of a stored view in its row: the JSON text, and the ETag of exactly that text. */
export const DOCUMENT_COLUMN = 'view_json';
export const ETAG_COLUMN = 'view_etag';
/** The version of the declaration that wrote the row's document (View#version). */
export const VERSION_COLUMN = 'view_version';

export type ViewOf<V extends View> = Static<V['schema']>;

export function defineView<F extends ViewFields>(declaration: ViewDeclaration<F>): View<F> {
  const a = declaration.alias;
  const built: JsonView = {
    from: `${declaration.table} ${a}`,
    alias: a,
    joins: declaration.joins,
    json: jsonObject(sqlOf(declaration.fields)),
  };
  const stored = declaration.stored !== undefined;
  const version = crypto
    .createHash('sha256')
    .update(`${built.json}\n${built.joins ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  return {
    name: declaration.name,
    table: declaration.table,
    schema: Closed(schemaOf(declaration.fields), declaration.schema ?? {}),
    built,
    stored,
    version,
    read: stored ? storedRead(built, declaration.name, version) : built,
    upkeepSql: stored ? upkeepSql(declaration, built, version) : '',
  };
}

/**
 * The stored text where the row's version is this declaration's; else the
 * view built from the row by the view's own function (upkeepSql), so that an
 * answer is never the document of an older declaration while the backfill
 * runs. The built view is called, not written inline: inline, every execution
 * set up its whole expression in two subplans that a current row never runs,
 * and a page's SQL cost a quarter more (bench/RESULTS-read-path.md).
 */
function storedRead(built: JsonView, name: string, version: string): JsonView {
  const a = built.alias;
  const current = `${a}.${VERSION_COLUMN} = '${version}'`;
  const fromRow = `${builtFunction(name)}(${a}.id)`;
  return {
    from: built.from,
    alias: a,
    json: `CASE WHEN ${current} THEN ${a}.${DOCUMENT_COLUMN} ELSE ${fromRow} END`,
    etag: `CASE WHEN ${current} THEN ${a}.${ETAG_COLUMN} ELSE merx_view_etag(${fromRow}) END`,
  };
}

/** The function that builds a stored view's JSON from its row, by id, as the trigger writes it. */
const builtFunction = (name: string) => `merx_view_${name}_built`;

/**
 * The document is written by a BEFORE trigger from the row being written
 * (NEW, as the alias the fields use), so it is in the same row version as
 * the change: one write, never a second UPDATE. A generated column is not
 * computed yet in a BEFORE trigger, which is why fields read jsonb through
 * merx_compact_json rather than a *_json twin. A source's change sets the
 * document to NULL, and the view's own trigger writes it anew.
 */
function upkeepSql(declaration: ViewDeclaration<ViewFields>, built: JsonView, version: string): string {
  const { name, table, alias } = declaration;
  const fn = `merx_view_${name}`;
  const statements = [
    `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${DOCUMENT_COLUMN} text, ADD COLUMN IF NOT EXISTS ${ETAG_COLUMN} text, ADD COLUMN IF NOT EXISTS ${VERSION_COLUMN} text`,
    `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  NEW.${DOCUMENT_COLUMN} := (SELECT ${built.json}::text FROM (SELECT NEW.*) ${alias} ${built.joins ?? ''});
  NEW.${ETAG_COLUMN} := merx_view_etag(NEW.${DOCUMENT_COLUMN});
  NEW.${VERSION_COLUMN} := '${version}';
  RETURN NEW;
END
$view$`,
    `DROP TRIGGER IF EXISTS ${fn} ON ${table}`,
    `CREATE TRIGGER ${fn} BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}()`,
    // PL/pgSQL, so that the planner never inlines it into a read (storedRead). PARALLEL SAFE (it only reads): a
    // function left unsafe keeps every read that names it, an export's COPY of a million rows too, off parallel plans.
    `CREATE OR REPLACE FUNCTION ${builtFunction(name)}(row_id uuid) RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $view$
BEGIN
  RETURN (SELECT ${built.json}::text FROM ${table} ${alias} ${built.joins ?? ''} WHERE ${alias}.id = row_id);
END
$view$`,
  ];
  for (const source of declaration.stored?.sources ?? []) {
    const sourceFn = `${fn}_from_${source.table}`;
    const rowOf = (row: 'OLD' | 'NEW') =>
      Object.entries(source.match)
        .map(([own, theirs]) => `${own} = ${row}.${theirs}`)
        .join(' AND ');
    const keyOf = (row: 'OLD' | 'NEW') =>
      `(${Object.values(source.match)
        .map((theirs) => `${row}.${theirs}`)
        .join(', ')})`;
    statements.push(
      `CREATE OR REPLACE FUNCTION ${sourceFn}() RETURNS trigger LANGUAGE plpgsql AS $view$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    UPDATE ${table} SET ${DOCUMENT_COLUMN} = NULL WHERE ${rowOf('OLD')};
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND ${keyOf('NEW')} IS DISTINCT FROM ${keyOf('OLD')}) THEN
    UPDATE ${table} SET ${DOCUMENT_COLUMN} = NULL WHERE ${rowOf('NEW')};
  END IF;
  RETURN NULL;
END
$view$`,
      `DROP TRIGGER IF EXISTS ${sourceFn} ON ${source.table}`,
      `CREATE TRIGGER ${sourceFn} AFTER INSERT OR DELETE OR UPDATE OF ${[...new Set([...Object.values(source.match), ...source.columns])].join(', ')}
        ON ${source.table} FOR EACH ROW EXECUTE FUNCTION ${sourceFn}()`,
    );
  }
  // A new version marks every row to be rewritten after the instances listen (view-upkeep.ts backfillViews); an empty table has none.
  statements.push(`INSERT INTO stored_views (name, definition_sha256, backfilled) VALUES ('${name}', '${version}', NOT EXISTS (SELECT FROM ${table}))
  ON CONFLICT (name) DO UPDATE SET definition_sha256 = EXCLUDED.definition_sha256, backfilled_through = NULL, backfilled = EXCLUDED.backfilled, updated_at = now()
  WHERE stored_views.definition_sha256 IS DISTINCT FROM EXCLUDED.definition_sha256`);
  return statements.map((s) => `${s};`).join('\n');
}
