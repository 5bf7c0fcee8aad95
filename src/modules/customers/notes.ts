// Customer notes (SPEC Customer, segment, note): written, then answered with
// the Note view as PostgreSQL writes it (issue 12).
import crypto from 'node:crypto';
import type { Sql } from '../../platform/db/db.ts';
import { isoTime, jsonObject, type JsonView, type JsonText, readOne } from '../../platform/read-path/index.ts';

export const NOTE_VIEW: JsonView = {
  from: 'customer_notes n',
  alias: 'n',
  json: jsonObject({
    id: 'n.id',
    customer_key: 'n.customer_key',
    text: 'n.text',
    created_at: isoTime('n.created_at'),
  }),
};

/** Stores a note and reads its view in the same transaction. */
export async function addNote(tx: Sql, accountId: string, customerKey: string, text: string): Promise<JsonText> {
  const id = crypto.randomUUID();
  await tx.query('INSERT INTO customer_notes (id, account_id, customer_key, text) VALUES ($1, $2, $3, $4)', [id, accountId, customerKey, text]);
  return (await readOne(tx, NOTE_VIEW, 'n.account_id = $1 AND n.id = $2', [accountId, id]))!;
}
