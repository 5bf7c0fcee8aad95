// The customer key (SPEC: the lower-cased e-mail, else the phone) has one
// definition, the database function customer_key_of (migration 019): the
// orders' generated column uses it, and so does every key the service
// derives from input (notes, segment members). JavaScript's toLowerCase and
// PostgreSQL's locale-dependent lower() once gave "İvan@x.io" two keys
// (issue 27); nothing here lower-cases by itself.
import type { Sql } from '../../platform/db/db.ts';

export interface CustomerRef {
  email?: string | null;
  phone?: string | null;
}

/** The key of each customer, in order (null for one with neither an e-mail nor a phone). */
export async function customerKeys(sql: Sql, customers: CustomerRef[]): Promise<Array<string | null>> {
  if (customers.length === 0) return [];
  const { rows } = await sql.query<{ key: string | null }>(
    `SELECT customer_key_of(r.email, r.phone) AS key
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(email, phone, n) ORDER BY r.n`,
    [customers.map((c) => c.email ?? null), customers.map((c) => c.phone ?? null)],
  );
  return rows.map((r) => r.key);
}

/** A key as a caller wrote it (a URL's customer key): an e-mail when it holds an @, else a phone, normalised the same way. */
export async function keyFromReference(sql: Sql, reference: string): Promise<string | null> {
  const [key] = await customerKeys(sql, [reference.includes('@') ? { email: reference } : { phone: reference }]);
  return key;
}
