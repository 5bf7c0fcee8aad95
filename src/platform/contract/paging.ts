// Keyset cursors on (created_at, id), newest first. A cursor is opaque: the
// position "<created_at>|<id>" sealed to the account it was issued to
// (cursor-seal.ts); anything else is a 400 (GAPS General, issue 27).
import { AppError } from './errors.ts';
import { isStrictDate } from './dates.ts';
import type { ScopedSeal } from './cursor-seal.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Keyset {
  createdAt: string;
  id: string;
}

export function encodeCursor(seal: ScopedSeal, position: Keyset): string {
  return seal.seal(`${position.createdAt}|${position.id}`);
}

export function decodeCursor(seal: ScopedSeal, cursor: string): Keyset {
  const bad = () => new AppError('validation_failed', 'cursor is not a cursor this API issued to this account; pass next_cursor unchanged');
  const text = seal.open(cursor);
  if (text === null) throw bad();
  const [createdAt, id, ...rest] = text.split('|');
  if (rest.length || !createdAt || !id || !UUID.test(id)) throw bad();
  if (!isStrictDate(createdAt) || createdAt.length === 10) {
    throw new AppError('validation_failed', 'cursor holds a created_at that is not a strict ISO 8601 date-time');
  }
  return { createdAt: new Date(createdAt).toISOString(), id: id.toLowerCase() };
}

/** Given limit + 1 rows, the page and where the next one starts. */
export function pageOf<T>(rows: T[], limit: number, seal: ScopedSeal, positionOf: (row: T) => Keyset) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return {
    data,
    has_more: hasMore,
    next_cursor: hasMore ? encodeCursor(seal, positionOf(data[data.length - 1])) : null,
  };
}

/** Query parameters built up alongside the SQL: bind(value) adds one and returns its placeholder. */
export function sqlParameters(...initial: unknown[]) {
  const values: unknown[] = [...initial];
  return { values, bind: (value: unknown) => (values.push(value), `$${values.length}`) };
}

/** The keyset condition for "after this cursor", newest first (rows ordered by created_at DESC, id DESC). */
export function afterCursor(seal: ScopedSeal, cursor: string, bind: (value: unknown) => string, alias?: string): string {
  const position = decodeCursor(seal, cursor);
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return `(${column('created_at')}, ${column('id')}) < (${bind(position.createdAt)}::timestamptz, ${bind(position.id)}::uuid)`;
}
