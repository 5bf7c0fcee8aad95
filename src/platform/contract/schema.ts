// Shared schema building blocks. Nullable fields are written as type arrays
// ({type: ['string', 'null']}), valid OpenAPI 3.1 and fast to serialise.
import { Type, type TSchema, type TObject, type TProperties } from 'typebox';

type Scalar = 'string' | 'integer' | 'number' | 'boolean';
type ScalarOf<T extends Scalar> = T extends 'string' ? string : T extends 'boolean' ? boolean : number;

export function Nullable<T extends Scalar>(type: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<ScalarOf<T> | null>({ type: [type, 'null'], ...options });
}

/** A closed object: SPEC "Response objects are closed", GAPS "unknown fields give 400". */
export function Closed<T extends TProperties>(properties: T, options: Record<string, unknown> = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

export const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...options });
export const NullableUuid = (options: Record<string, unknown> = {}) => Nullable('string', { format: 'uuid', ...options });
export const DateTime = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });
export const NullableDateTime = (options: Record<string, unknown> = {}) => Nullable('string', { format: 'date-time', ...options });

/**
 * SPEC Errors: strict ISO 8601. A date (2026-09-01) or a date-time with
 * seconds and Z or an offset, optional fraction. Lenient forms are refused.
 */
export const STRICT_DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2}))?$';
export const StrictDate = (description?: string) =>
  Type.String({ format: 'strict-date', pattern: STRICT_DATE_PATTERN, ...(description ? { description } : {}) });

export const Limit = (fallback = 50) => Type.Integer({ minimum: 1, maximum: 200, default: fallback });
export const Cursor = () => Type.String({ minLength: 1, maxLength: 200, description: 'next_cursor of the previous page.' });

export function ListOf<T extends TSchema>(item: T) {
  return Closed({
    data: Type.Array(item),
    has_more: Type.Boolean(),
    next_cursor: Nullable('string', { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  });
}

export const ErrorBody = Closed(
  {
    error: Closed({
      code: Type.String({ description: 'Stable snake_case code (SPEC Errors).' }),
      message: Type.String({ description: 'English, not stable.' }),
      scope: Type.Optional(Type.String()),
      details: Type.Optional(Type.Unsafe<unknown>({ type: ['object', 'array'], additionalProperties: true })),
    }),
  },
  { $id: 'Error' },
);
