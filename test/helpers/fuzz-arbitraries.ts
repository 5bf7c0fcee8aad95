// fast-check arbitraries that turn a JSON Schema (an OpenAPI parameter or
// request body, an MCP tool's inputSchema) into inputs: mostly valid values,
// mixed with the hostile ones an outside fuzzer sends (NUL and odd Unicode,
// strings past their bounds, huge and non-finite numbers, dates outside
// years 0001-9999, wrong types, unknown keys). Used by test/fuzz.test.ts;
// nothing here knows an operation, so operations added later are fuzzed too.
import fc from 'fast-check';

type Schema = Record<string, any>;

/** What the generator may point ids at, and how to resolve a document's `$ref`s. */
export interface FuzzContext {
  /** UUIDs of real rows (the caller's, another account's): ids that reach the data. */
  ids: string[];
  /** Webhook URLs that never leave this machine: the service's own debug sink and refused targets. */
  webhookUrls: string[];
  resolve(ref: string): Schema;
}

/** A number JSON.stringify cannot write (1e400, 30 digits): sent as its raw text. */
export class RawNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** JSON text of a generated value, RawNumbers written verbatim. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => (v instanceof RawNumber ? `__RAW_NUMBER_${raws.push(v.text) - 1}__` : v));
  return (text ?? 'null').replace(/"__RAW_NUMBER_(\d+)__"/g, (_m, i) => raws[Number(i)]);
}

/** A generated value as a query or path parameter. */
export function toParam(value: unknown): string {
  if (value instanceof RawNumber) return value.text;
  return typeof value === 'string' ? value : toJsonText(value);
}

export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(3),
  '%00',
  '\\u0000',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  '👩🏽‍🚀',
  '𝕏𝔶',
  '\ud800',
  '\udfff',
  'e\u0301',
  '\uffff',
  '\ufeffBOM',
  'null',
  'undefined',
  'NaN',
  '-0',
  '1e400',
  "' OR '1'='1",
  "'; DROP TABLE orders; --",
  '%',
  '_',
  '%_\\',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${jndi:x}',
  '\r\n\r\nX-Injected: 1',
  '\t',
  ' \n ',
  'x'.repeat(201),
  'x'.repeat(2001),
  'é'.repeat(10_001),
  '__proto__',
  'constructor',
  'merx_',
  `merx_${'a'.repeat(40)}`,
];

export const EXTREME_DATES = [
  '0000-01-01',
  '0000-12-31T23:59:59Z',
  '0001-01-01',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00+00:01',
  '9999-12-31',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59-14:00',
  '+010000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2026-02-29',
  '2024-02-29',
  '2026-13-01',
  '2026-00-10',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:59:60Z',
  '2026-09-01T10:00:00+14:59',
  '2026-09-01T10:00:00+15:00',
  '2026-09-01T10:00:00.1234567890Z',
  '1970-01-01T00:00:00.000000001Z',
  '2026-09-01t10:00:00z',
  '2026-09-01 10:00:00Z',
  '20260901',
  '2026-W01',
  'yesterday',
  '1767571200000',
];

export const EXTREME_NUMBERS: unknown[] = [
  0,
  -0,
  -1,
  1,
  0.5,
  -0.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  2 ** 63,
  1e21,
  1e308,
  -1e308,
  5e-324,
  1e-7,
  new RawNumber('1e400'),
  new RawNumber('-1e400'),
  new RawNumber('123456789012345678901234567890'),
  new RawNumber('0.000000000000000000000000001'),
  new RawNumber('1E2'),
  new RawNumber('-0.0'),
];

const SAMPLE = 4;
const WRONG_TYPES = fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 'x', '', [], {}, [null], { a: 1 }, new RawNumber('1e400'));

/** Any JSON value at all, for the places a schema says nothing about. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 2 }), WRONG_TYPES, fc.constantFrom(...NASTY_STRINGS));

/** Strings for string fields that are not URLs: no generated text may make the service call out. */
const looksLikeUrl = (s: string) => /^[a-z][a-z0-9+.-]*:/i.test(s.trim());

function text(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 60, 60);
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, max) }) },
      { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, max), unit: 'grapheme' }) },
      { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, max), unit: 'binary' }) },
      { weight: 1, arbitrary: fc.emailAddress() },
    )
    .filter((s) => !looksLikeUrl(s));
}

function validDate(): fc.Arbitrary<string> {
  const instant = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2040-12-31T23:59:59Z'), noInvalidDate: true });
  return fc.oneof(
    instant.map((d) => d.toISOString()),
    instant.map((d) => d.toISOString().slice(0, 10)),
    fc
      .tuple(instant, fc.integer({ min: -14, max: 14 }))
      .map(([d, h]) => `${d.toISOString().slice(0, 19)}${h < 0 ? '-' : '+'}${String(Math.abs(h)).padStart(2, '0')}:00`),
  );
}

function boundedNumber(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = Math.max(schema.minimum ?? -1_000_000, integer ? Number.MIN_SAFE_INTEGER : -1e12);
  const max = Math.min(schema.maximum ?? 1_000_000, integer ? Number.MAX_SAFE_INTEGER : 1e12);
  return integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

const typesOf = (schema: Schema): string[] => [schema.type ?? []].flat();

/** A value the schema accepts (as far as a generator can tell). */
function validValue(schema: Schema, ctx: FuzzContext, name: string, depth: number): fc.Arbitrary<unknown> {
  if (schema.$ref) return validValue(ctx.resolve(schema.$ref), ctx, name, depth);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  for (const key of ['anyOf', 'oneOf']) if (schema[key]) return fc.oneof(...schema[key].map((s: Schema) => validValue(s, ctx, name, depth)));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => validValue({ ...schema, type }, ctx, name, depth)));
  switch (types[0]) {
    case 'string':
      if (schema.format === 'uuid') return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ctx.ids) }, { weight: 1, arbitrary: fc.uuid() });
      if (schema.format === 'strict-date' || schema.format === 'date-time') return validDate();
      if (name === 'url') return fc.constantFrom(...ctx.webhookUrls);
      return text(schema);
    case 'integer':
      return boundedNumber(schema, true);
    case 'number':
      return boundedNumber(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const item = schema.items ? validValue(schema.items, ctx, name, depth + 1) : anyJson;
      return fc.array(item, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? SAMPLE, SAMPLE) });
    }
    case 'object':
      return depth > 3 ? fc.constant({}) : objectValue(schema, ctx, depth);
    default:
      return anyJson;
  }
}

function objectValue(schema: Schema, ctx: FuzzContext, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const model = Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, value(s, ctx, key, depth + 1)]));
  const known = fc.record(model, { requiredKeys: (schema.required ?? []).filter((k: string) => k in properties) });
  const open = schema.additionalProperties !== false || schema.patternProperties;
  if (!open) return known;
  const extra = schema.patternProperties ? Object.values<Schema>(schema.patternProperties)[0] : schema.additionalProperties;
  const extraValue = extra && typeof extra === 'object' ? value(extra, ctx, '', depth + 1) : anyJson;
  return fc.tuple(known, fc.dictionary(fc.string({ maxLength: 8 }), extraValue, { maxKeys: 3 })).map(([k, e]) => ({ ...e, ...k }));
}

/** A value the schema refuses, or one at the edge of what it accepts. */
function hostileValue(schema: Schema, ctx: FuzzContext, name: string, depth: number): fc.Arbitrary<unknown> {
  if (schema.$ref) return hostileValue(ctx.resolve(schema.$ref), ctx, name, depth);
  const types = typesOf(schema);
  const options: fc.Arbitrary<unknown>[] = [WRONG_TYPES, fc.constantFrom(...NASTY_STRINGS)];
  if (types.includes('string') || schema.format) {
    options.push(
      fc.constantFrom(...EXTREME_DATES),
      text({}).map((s) => `${s}\u0000${s}`),
    );
    if (schema.maxLength) options.push(fc.constant('y'.repeat(schema.maxLength + 1)), fc.constant('ÿ'.repeat(schema.maxLength)));
    if (schema.format === 'uuid')
      options.push(
        fc.uuid().map((u) => u.toUpperCase()),
        fc.uuid().map((u) => `${u}\u0000`),
        fc.uuid().map((u) => u.replace(/-/g, '')),
      );
  }
  if (types.includes('integer') || types.includes('number')) options.push(fc.constantFrom(...EXTREME_NUMBERS));
  if (types.includes('object') && depth < 3) {
    // A schema of several types (an object or anything else) may give an array: the object variants start from {} then.
    const base = validValue(schema, ctx, name, depth).map((v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {}));
    options.push(
      base.map((v) => ({ ...v, ['unknown_field']: 1 })),
      base.map((v) => ({ ...v, ['k\u0000ey']: 'v' })),
      base.map((v) => JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(v).slice(1)}`.replace(/, }$/, '}'))),
    );
  }
  if (types.includes('array')) {
    const item = schema.items ? value(schema.items, ctx, name, depth + 1) : anyJson;
    options.push(
      fc.array(item, { minLength: (schema.maxItems ?? 20) + 1, maxLength: (schema.maxItems ?? 20) + 2 }),
      fc.constant([]),
      fc.array(WRONG_TYPES, { maxLength: 3 }),
    );
  }
  return fc.oneof(...options);
}

/**
 * What the fuzzer puts in one field: mostly valid, sometimes hostile; or, in
 * `validOnly` mode, valid throughout (so that whole requests get past
 * validation and reach the data as often as not).
 */
export function value(schema: Schema, ctx: FuzzContext, name = '', depth = 0, validOnly = false): fc.Arbitrary<unknown> {
  if (validOnly) return validValue(schema, ctx, name, depth);
  return fc.oneof({ weight: 5, arbitrary: validValue(schema, ctx, name, depth) }, { weight: 2, arbitrary: hostileValue(schema, ctx, name, depth) });
}

/** A whole JSON body for a schema: usually an object, sometimes not JSON at all. */
export function body(schema: Schema, ctx: FuzzContext, validOnly = false): fc.Arbitrary<{ text: string; contentType: string | null }> {
  const json = value(schema, ctx, '', 0, validOnly).map((v) => ({ text: toJsonText(v), contentType: 'application/json' as string | null }));
  if (validOnly) return json;
  const raw = fc.constantFrom(
    { text: '{', contentType: 'application/json' },
    { text: '{"a":1,}', contentType: 'application/json' },
    { text: '', contentType: 'application/json' },
    { text: 'null', contentType: 'application/json' },
    { text: '[]', contentType: 'application/json' },
    { text: '"text"', contentType: 'application/json' },
    { text: '{"a":1}', contentType: 'text/plain' },
    { text: '{"a":1}', contentType: null },
    { text: '{"name":"x"}', contentType: 'application/json; charset=latin1' },
    { text: `${'['.repeat(5000)}${']'.repeat(5000)}`, contentType: 'application/json' },
    { text: `{"x":"${'\\u0000'.repeat(3)}"}`, contentType: 'application/json' },
    { text: '\u0000', contentType: 'application/json' },
  );
  return fc.oneof({ weight: 8, arbitrary: json }, { weight: 1, arbitrary: raw });
}
