// Issue 29: the rows whose stored document is not the view built from the row
// now (or whose ETag is not the tag of that document, or that have none, or
// that an older declaration wrote).
import type { Sql } from '../../src/platform/db/db.ts';
import { DOCUMENT_COLUMN, ETAG_COLUMN, VERSION_COLUMN, type View } from '../../src/platform/read-path/stored-view.ts';

export async function staleDocuments(sql: Sql, view: View, accountId?: string): Promise<string[]> {
  const { alias: a, from, joins, json } = view.built;
  const { rows } = await sql.query<{ id: string }>(
    `SELECT ${a}.id::text AS id FROM ${from} ${joins ?? ''}
      WHERE ($1::uuid IS NULL OR ${a}.account_id = $1)
        AND (${a}.${DOCUMENT_COLUMN} IS DISTINCT FROM ${json}::text OR ${a}.${ETAG_COLUMN} IS DISTINCT FROM merx_view_etag(${a}.${DOCUMENT_COLUMN})
             OR ${a}.${VERSION_COLUMN} IS DISTINCT FROM '${view.version}')
      ORDER BY 1`,
    [accountId ?? null],
  );
  return rows.map((r) => r.id);
}
