// Input validation shared by REST and MCP, so both refuse the same input with
// the same words. Query strings are coerced to their declared types; JSON
// bodies and MCP arguments are not (a wrong type is a 400 / -32602).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TObject, TSchema } from 'typebox';
import { AppError } from './errors.ts';
import { isStrictDate, STRICT_DATE_HINT } from './dates.ts';
import { MAX_JSON_DEPTH, tooDeep } from './json-depth.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    verbose: true,
  });
  addFormats(ajv);
  ajv.addFormat('strict-date', { type: 'string', validate: isStrictDate });
  return ajv;
}

const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

export type Part = 'path' | 'query' | 'body' | 'arguments';

export interface Validator {
  (data: unknown): void;
}

function fieldName(error: ErrorObject, part: Part): string {
  const path = error.instancePath.split('/').filter(Boolean).join('.');
  if (path) return path;
  return part === 'body' ? 'body' : part;
}

function describe(error: ErrorObject, part: Part): AppError {
  const at = fieldName(error, part);
  const where = error.instancePath ? `${at}` : part === 'body' ? 'the body' : `the ${part}`;
  switch (error.keyword) {
    case 'additionalProperties': {
      const unknown = error.params.additionalProperty as string;
      const allowed = Object.keys((error.parentSchema as { properties?: object })?.properties ?? {});
      const prefix = error.instancePath ? `${at}.` : '';
      const noun = part === 'query' ? 'query parameter' : part === 'arguments' ? 'argument' : 'field';
      return new AppError('validation_failed', `unknown ${noun} "${prefix}${unknown}"`, { allowed });
    }
    case 'required':
      return new AppError('validation_failed', `${error.instancePath ? `${at}.` : ''}${error.params.missingProperty} is required`);
    case 'enum':
      return new AppError('validation_failed', `${where} must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`, {
        allowed: (error.params.allowedValues as unknown[]).map(String),
      });
    case 'format':
    case 'pattern': {
      const format = (error.parentSchema as { format?: string })?.format ?? error.params.format;
      if (format === 'uuid') return new AppError('validation_failed', `${where} must be a UUID`);
      if (format === 'strict-date') return new AppError('validation_failed', `${where} must be ${STRICT_DATE_HINT}`);
      return new AppError('validation_failed', `${where} ${error.message ?? 'is malformed'}`);
    }
    case 'type':
      return new AppError('validation_failed', `${where} must be of type ${[error.params.type].flat().join(' or ')}`);
    default:
      return new AppError('validation_failed', `${where} ${error.message ?? 'is invalid'}`);
  }
}

/** Query strings are coerced to numbers by Ajv, which would take "1e2" or "0x10"; integers must be written as digits. */
function integerFields(schema: TSchema): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, s]) => s.type === 'integer')
    .map(([name]) => name);
}

function badText(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL characters (\\u0000)';
  return text.isWellFormed() ? null : 'must be valid Unicode (an unpaired surrogate such as \\ud800 is not)';
}

/** Where a value sits in the input: its key and its parent's place (a path built only when something is refused). */
interface Place {
  key: string;
  parent: Place | null;
  depth: number;
}

const pathOf = (place: Place | null): string[] => {
  const path: string[] = [];
  for (let at = place; at; at = at.parent) path.push(at.key);
  return path.reverse();
};

/**
 * Values no column can take, refused here before any data access, for every
 * operation on every transport, at any depth: a NUL (U+0000) in a string or a
 * key (PostgreSQL text and jsonb cannot hold it), an unpaired surrogate
 * (JSON's "\ud800" is no Unicode character: jsonb refuses it, text would
 * silently turn it into U+FFFD), and a number that JSON parsing turned into
 * Infinity (a literal such as 1e400), which JSON Schema's type and range
 * checks let through. Also nesting past MAX_JSON_DEPTH (issue 27; REST and
 * MCP refuse deeper text before parsing, this holds for any caller). The walk
 * keeps its own stack: no recursion, whatever the depth.
 */
function unstorable(data: unknown): { path: string[]; problem: string } | 'too_deep' | null {
  const todo: Array<{ value: unknown; place: Place | null }> = [{ value: data, place: null }];
  while (todo.length) {
    const { value, place } = todo.pop()!;
    const keyProblem = place && badText(place.key);
    if (keyProblem) return { path: [...pathOf(place.parent), place.key.replaceAll('\u0000', '\\u0000').toWellFormed()], problem: keyProblem };
    if (typeof value === 'string') {
      const problem = badText(value);
      if (problem) return { path: pathOf(place), problem };
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return { path: pathOf(place), problem: 'must be a finite number' };
    } else if (value && typeof value === 'object') {
      const depth = (place?.depth ?? 0) + 1;
      if (depth > MAX_JSON_DEPTH) return 'too_deep';
      // Pushed last to first: the first problem in document order is the one named, as a recursive walk would.
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) todo.push({ value: entries[i][1], place: { key: entries[i][0], parent: place, depth } });
    }
  }
  return null;
}

const partName = (part: Part) => (part === 'body' ? 'the body' : `the ${part}`);

function refuseUnstorable(data: unknown, part: Part): void {
  const found = unstorable(data);
  if (found === 'too_deep') throw tooDeep(partName(part));
  if (found) {
    const where = found.path.length ? found.path.join('.') : partName(part);
    throw new AppError('validation_failed', `${where} ${found.problem}`);
  }
}

export function compileValidator(schema: TSchema, part: Part): Validator {
  const coerced = part === 'query' || part === 'path';
  const ajv = coerced ? coercingAjv : strictAjv;
  const validate: ValidateFunction = ajv.compile(schema);
  const integers = coerced ? integerFields(schema) : [];
  return (data: unknown) => {
    refuseUnstorable(data, part);
    for (const name of integers) {
      const raw = (data as Record<string, unknown>)[name];
      if (typeof raw === 'string' && !/^-?\d+$/.test(raw)) throw new AppError('validation_failed', `${name} must be an integer`);
    }
    if (!validate(data)) throw describe(validate.errors![0], part);
  };
}

/** An empty closed object for operations that take no input in a part. */
export function compileOptional(schema: TObject | undefined, part: Part): Validator {
  if (!schema) {
    return (data) => {
      refuseUnstorable(data, part);
      const keys = data && typeof data === 'object' ? Object.keys(data) : [];
      if (keys.length) {
        const noun = part === 'query' ? 'query parameter' : 'field';
        throw new AppError('validation_failed', `unknown ${noun} "${keys[0]}"`, { allowed: [] });
      }
    };
  }
  return compileValidator(schema, part);
}
