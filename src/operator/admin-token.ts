// OPERATOR_API Running: ADMIN_TOKEN, else one generated on first start and kept in the database.
import crypto from 'node:crypto';
import type { Db } from '../platform/db.ts';

export async function resolveAdminToken(db: Db, configured: string | null): Promise<{ token: string; generated: boolean }> {
  if (configured) return { token: configured, generated: false };
  const fresh = `merx_admin_${crypto.randomBytes(24).toString('base64url')}`;
  // ON CONFLICT keeps the first token when several instances start at once.
  const { rows } = await db.query<{ value: string }>(
    `INSERT INTO settings (key, value) VALUES ('admin_token', $1)
     ON CONFLICT (key) DO UPDATE SET value = settings.value RETURNING value`,
    [fresh],
  );
  return { token: rows[0].value, generated: rows[0].value === fresh };
}
