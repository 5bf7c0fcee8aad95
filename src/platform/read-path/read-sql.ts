// The one read path every view-returning operation uses (issue 12): the query
// selects each row's JSON as text, and the list envelope
// {data, has_more, next_cursor} is spliced around those texts. Keyset paging
// as in paging.ts: newest first on (created_at, id), limit + 1 rows fetched
// to learn has_more, the cursor taken from the last row's keyset values.
import type { QueryOptions, Sql } from '../db/db.ts';
import { JsonText, StoredText } from './json-text.ts';
import { isoTime, type JsonView } from './json-view.ts';
import type { View } from './stored-view.ts';
import { etagOfAnswer } from '../contract/etag.ts';
import { afterCursor, encodeCursor } from '../contract/paging.ts';
import { documentOf } from './document-cache.ts';
import type { ScopedSeal } from '../contract/cursor-seal.ts';

/** A keyset page: its size, where it starts (the previous page's next_cursor), and the seal of the account it is read for. */
export interface KeysetPage {
  limit: number;
  cursor?: string;
  seal: ScopedSeal;
}

/** The WHERE conditions and their parameters, built with paging.ts's sqlParameters. */
export interface Filter {
  where: string[];
  values: unknown[];
  bind: (value: unknown) => string;
  /**
   * The best plan depends on the values (how many rows a product or a search
   * matches: walk the newest-first index, or look the few rows up and sort
   * them), so the statement is planned for each request's values rather than
   * prepared, whose generic plan would pick one way for every value.
   */
  planPerValue?: boolean;
}

/** Built statement texts per view, by what varies between them (at most TEXTS_PER_VIEW each; past that the map starts over). */
const statementTexts = new WeakMap<JsonView, Map<string, string>>();
const TEXTS_PER_VIEW = 256;

/**
 * The statement text `build` writes, the same string every time for the same
 * view and `variant`. A view's text is 1-3 kB: rebuilt per request it was a
 * new string that the prepared-statement lookup (db.ts) hashed and pg compared
 * in full on every request (about 4% of the service's time on GET by id in a
 * profile); a string seen before has its hash and compares by identity.
 */
function statementText(view: JsonView, variant: string, build: () => string): string {
  let texts = statementTexts.get(view);
  if (!texts) statementTexts.set(view, (texts = new Map()));
  let text = texts.get(variant);
  if (text === undefined) {
    if (texts.size >= TEXTS_PER_VIEW) texts.clear();
    texts.set(variant, (text = build()));
  }
  return text;
}

/**
 * One row's view, or null. The statement is prepared: gets are the hot path.
 * A view whose text is compiled per row (a segment's count from its filters)
 * passes { prepared: false }: prepared names are for a bounded set of texts.
 */
export async function readOne(
  sql: Sql,
  view: JsonView,
  where: string,
  params: unknown[],
  options: QueryOptions = { prepared: true },
): Promise<JsonText | null> {
  const tags = view.etag ? `$${params.length + 1}` : '';
  const columns = view.etag ? cacheCheckedColumns(view, tags) : `${view.json}::text AS v`;
  const text = statementText(view, `${where} ${tags}`, () => `SELECT ${columns} FROM ${view.from} ${view.joins ?? ''} WHERE ${where}`);
  if (!view.etag) {
    const { rows } = await sql.query<{ v: string }>(text, params, options);
    return rows[0] ? new JsonText(rows[0].v) : null;
  }
  const cached = sql.documentCache.lookup(text, params);
  const row = (await sql.query<CacheCheckedRow>(text, [...params, cached.tags], options)).rows[0];
  if (!row) return null;
  const document = documentOf(cached, row.v, row.e);
  sql.documentCache.store(cached, [document]);
  return new JsonText([document], null, document.etag);
}

/**
 * A stored view's columns in a read that sends the tags of the documents it
 * was answered with last (document-cache.ts) as the parameter `tags`: the
 * text only where the row's tag is not one of them.
 */
function cacheCheckedColumns(view: JsonView, tags: string): string {
  return `CASE WHEN ${view.etag} = ANY (${tags}::text[]) THEN NULL ELSE ${view.json}::text END AS v, ${view.etag} AS e`;
}

/**
 * A stored view's current ETag (EXTENSIONS 3 If-Match), or null when the row
 * is missing; `lock` takes the row's lock for the rest of the transaction.
 */
export async function storedEtag(sql: Sql, view: View, accountId: string, id: string, options: { lock: boolean }): Promise<string | null> {
  const { rows } = await sql.query<{ e: string }>(
    // The tag a read answers with (a row an older declaration wrote: its view's tag built from the row).
    `SELECT ${view.read.etag} AS e FROM ${view.read.from} WHERE ${view.read.alias}.account_id = $1 AND ${view.read.alias}.id = $2${
      options.lock ? ` FOR UPDATE OF ${view.read.alias}` : ''
    }`,
    [accountId, id],
    { prepared: true },
  );
  return rows[0]?.e ?? null;
}

/** Up to this many pages in, an offset page is read directly (a looked-up row costs about as much as three skipped ones). */
const DIRECT_OFFSET_PAGES = 4;

/** The views of many rows as one JSON array; `orderBy` may end in LIMIT/OFFSET. */
export async function readArray(sql: Sql, view: JsonView, where: string, params: unknown[], orderBy: string): Promise<JsonText> {
  const { rows } = await sql.query<{ v: string }>(
    `SELECT ${view.json}::text AS v FROM ${view.from} ${view.joins ?? ''} WHERE ${where} ORDER BY ${orderBy}`,
    params,
  );
  return arrayText(rows);
}

/** The rows' view texts as one JSON array. */
function arrayText(rows: Array<{ v: string }>): JsonText {
  return new JsonText(`[${rows.map((r) => r.v).join(',')}]`);
}

/**
 * An offset page. Deep in the list, the inner query walks the ordering index
 * for the keys of the page's rows alone (an index-only scan over the skipped
 * rows where the index holds the key) and the view is built for those rows
 * only: OFFSET over the view read a row for every skipped row
 * (bench/RESULTS-explain.md, customers deep in the list). Near
 * the top, where skipping costs less than looking the page's rows up again,
 * the rows are read directly. `keys`: the columns that identify a row, unqualified.
 * The inner query has the view's table only: `where` and `orderBy` may not use its joins.
 */
export async function readOffsetPage(
  sql: Sql,
  view: JsonView,
  keys: string[],
  where: string,
  params: unknown[],
  page: { orderBy: string; limit: number; offset: number },
): Promise<JsonText> {
  const a = view.alias;
  if (page.offset < DIRECT_OFFSET_PAGES * page.limit) {
    return readArray(sql, view, where, params, `${page.orderBy} LIMIT ${Number(page.limit)} OFFSET ${Number(page.offset)}`);
  }
  const { rows } = await sql.query<{ v: string }>(
    `SELECT ${view.json}::text AS v
       FROM (SELECT ${keys.map((k) => `${a}.${k}`).join(', ')} FROM ${view.from} WHERE ${where}
              ORDER BY ${page.orderBy} LIMIT ${Number(page.limit)} OFFSET ${Number(page.offset)}) page
       JOIN ${view.from} ON ${keys.map((k) => `${a}.${k} = page.${k}`).join(' AND ')}
       ${view.joins ?? ''}
      ORDER BY ${page.orderBy}`,
    params,
  );
  return arrayText(rows);
}

/**
 * A keyset page newest first. The inner query finds the page's rows on the
 * index alone; the view (and its joins) is built for those rows only. Its
 * LIMIT is written into the text, as readOffsetPage's is, not bound:
 * PostgreSQL costs a generic plan's LIMIT $n as a tenth of the rows, so a
 * prepared page never settled on its generic plan and was planned anew on
 * every request (bench/RESULTS-read-path.md). One statement per page size a
 * connection serves.
 */
export async function readPage(sql: Sql, view: JsonView, filter: Filter, page: KeysetPage): Promise<JsonText> {
  const a = view.alias;
  const where = [...filter.where];
  if (page.cursor) where.push(afterCursor(page.seal, page.cursor, filter.bind, a));
  const conditions = where.join(' AND ');
  const limit = Number(page.limit) + 1;
  const order = `${a}.created_at DESC, ${a}.id DESC`;
  const tags = view.etag ? `$${filter.values.length + 1}` : '';
  const columns = `${view.etag ? cacheCheckedColumns(view, tags) : `${view.json}::text AS v`}, ${isoTime(`${a}.created_at`)} AS c, ${a}.id::text AS i`;
  const text = statementText(
    view,
    `${limit} ${conditions} ${tags}`,
    () =>
      `SELECT ${columns}
       FROM (SELECT * FROM ${view.from} WHERE ${conditions} ORDER BY ${order} LIMIT ${limit}) ${a}
       ${view.joins ?? ''}
      ORDER BY ${order}`,
  );
  const options = { prepared: !filter.planPerValue };
  if (!view.etag) return pageText((await sql.query<PageRow>(text, filter.values, options)).rows, page.limit, page.seal);
  // A stored view: the text only of the documents whose tags differ from those this read was answered with last.
  const cached = sql.documentCache.lookup(text, filter.values);
  const { rows } = await sql.query<CacheCheckedRow & { c: string; i: string }>(text, [...filter.values, cached.tags], options);
  const documents = rows.map((row) => documentOf(cached, row.v, row.e));
  // Every row cached and no other: the same documents, so the same page (its cursor and ETag too).
  const changed = rows.length !== cached.documents.size || rows.some((row) => row.v !== null);
  if (!changed && cached.answer?.sealedBy === page.seal.sealedBy) return cached.answer.page;
  const answer = pageText(
    rows.map((row, n) => ({ v: documents[n], e: row.e, c: row.c, i: row.i })),
    page.limit,
    page.seal,
  ).cacheBytes();
  sql.documentCache.store(cached, documents, { page: answer, sealedBy: page.seal.sealedBy });
  return answer;
}

/** A row of a keyset page: its view's text (cached, for a stored view), its stored ETag (a stored view), and its keyset values. */
export interface PageRow {
  v: string | StoredText;
  e?: string;
  c: string;
  i: string;
}

/** A stored view's row in a read that sent its cached tags: the text is null where the tag is one of them. */
interface CacheCheckedRow {
  v: string | null;
  e: string;
}

/**
 * {data, has_more, next_cursor} around rows fetched with limit + 1. A page of
 * stored views gets its ETag from the rows' stored tags (issue 29): the
 * same page has the same tags, and any change to a row changes its tag, so
 * the page is tagged without hashing its ~60 kB of text.
 */
export function pageText(rows: PageRow[], limit: number, seal: ScopedSeal): JsonText {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  const cursor = hasMore ? JSON.stringify(encodeCursor(seal, { createdAt: last.c, id: last.i })) : 'null';
  const stored = data.every((r) => r.e !== undefined);
  const etag = stored ? etagOfAnswer(`${data.map((r) => r.e).join(',')}|${hasMore}|${cursor}`) : null;
  // The rows' texts are written one after another into the bytes sent, never joined into one string first.
  const pieces: Array<string | StoredText> = ['{"data":['];
  data.forEach((r, i) => pieces.push(i ? ',' : '', r.v));
  pieces.push(`],"has_more":${hasMore},"next_cursor":${cursor}}`);
  return new JsonText(pieces, null, etag);
}
