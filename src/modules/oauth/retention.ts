// EXTENSIONS 10: what the OAuth tables keep. A code is kept a day past its
// 60 s (a reuse within that day still revokes its grant; later it is simply
// unknown); an access token a day past its hour. Refresh tokens, used ones
// too, stay while their grant does: a used one presented again must still
// revoke it.
import type { Sql } from '../../platform/db/db.ts';

export async function pruneOAuth(sql: Sql, now: Date): Promise<number> {
  const codes = await sql.query(`DELETE FROM oauth_codes WHERE expires_at < $1::timestamptz - interval '1 day'`, [now.toISOString()]);
  const tokens = await sql.query(`DELETE FROM oauth_tokens WHERE kind = 'access' AND expires_at < $1::timestamptz - interval '1 day'`, [
    now.toISOString(),
  ]);
  return (codes.rowCount ?? 0) + (tokens.rowCount ?? 0);
}
