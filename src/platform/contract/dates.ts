// SPEC Errors: strict ISO 8601 dates. GAPS General: a date-only lower bound is
// 00:00:00Z of that day, a date-only upper bound the end of that day.
import { STRICT_DATE_PATTERN } from './schema.ts';
import { AppError } from './errors.ts';

const pattern = new RegExp(STRICT_DATE_PATTERN);
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The instants a date may name: years 0001..9999 in UTC. PostgreSQL has no
 * year 0, and an ISO string past 9999 is no longer 4-digit ISO 8601; so
 * 0000-01-01 and 9999-12-31T23:59:59-14:00 (year 10000 in UTC) are refused.
 */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

export function isSupportedInstant(instant: number): boolean {
  return instant >= EARLIEST && instant <= LATEST;
}

export const STRICT_DATE_HINT = 'a strict ISO 8601 date or date-time in years 0001-9999 UTC (e.g. 2026-09-01 or 2026-09-01T10:00:00Z)';

export function isStrictDate(value: string): boolean {
  if (!pattern.test(value)) return false;
  const [y, m, d] = [Number(value.slice(0, 4)), Number(value.slice(5, 7)), Number(value.slice(8, 10))];
  if (m < 1 || m > 12 || d < 1 || d > DAYS_IN_MONTH[m - 1]) return false;
  if (m === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return false;
  if (value.length === 10) return isSupportedInstant(Date.parse(`${value}T00:00:00Z`));
  const [hh, mm, ss] = [Number(value.slice(11, 13)), Number(value.slice(14, 16)), Number(value.slice(17, 19))];
  if (hh > 23 || mm > 59 || ss > 59) return false;
  const offset = value.match(/([+-])(\d{2}):(\d{2})$/);
  if (offset && (Number(offset[2]) > 14 || Number(offset[3]) > 59)) return false;
  return isSupportedInstant(Date.parse(value));
}

/** A strict date as an ISO instant; date-only values take the start (or end) of that UTC day. */
export function parseStrictDate(field: string, value: string, bound: 'start' | 'end' = 'start'): string {
  if (!isStrictDate(value)) {
    throw new AppError('validation_failed', `${field} must be ${STRICT_DATE_HINT}`);
  }
  if (value.length === 10) return bound === 'start' ? `${value}T00:00:00.000Z` : `${value}T23:59:59.999Z`;
  const instant = new Date(value);
  // Timestamps are stored to the millisecond. A lower bound with a finer
  // fraction (…00.000000001Z) must not let in the millisecond before it.
  const fraction = value.match(/\.(\d+)/)?.[1] ?? '';
  if (bound === 'start' && /[1-9]/.test(fraction.slice(3))) instant.setTime(instant.getTime() + 1);
  return instant.toISOString();
}
