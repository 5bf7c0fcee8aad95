// Request samples for every operation of the public reference (issue 28):
// Redoc's `x-codeSamples`, one with curl and one with the typed client
// `merx-client`, written here from the operation's declaration (method, path,
// parameters, body schema), so they follow the operation list like the rest of the
// document.
import type { TSchema } from 'typebox';
import type { DescribedRoute } from './described-route.ts';

export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

type Schema = TSchema & Record<string, any>;

const FORMATS: Record<string, unknown> = {
  'date-time': '2026-11-01T00:00:00Z',
  date: '2026-11-01',
  email: 'ana.petrova@example.com',
  uri: 'https://your-shop.example/hooks/merx',
};

/**
 * Issue 41: a sample is a request the service accepts, with values a reader
 * recognises, not the schema's placeholders ("<url>", qty -1000000). Values by
 * field name; an id stays a placeholder the reader fills (`<order_id>`, like
 * `<id>` in the path); a whole body where one field's value depends on another.
 */
const FIELD_SAMPLES: Record<string, unknown> = {
  name: 'Enamel mug 350 ml',
  sku: 'MUG-350-BLUE',
  price: 12.5,
  qty: 10,
  unit_cost: 4.2,
  note: 'Supplier delivery, invoice 2026-114',
  reason: 'The customer cancelled by phone',
  text: 'Prefers delivery after 17:00',
  url: 'https://your-shop.example/hooks/merx',
  email: 'ana.petrova@example.com',
  events: ['order.created', 'order.status_changed'],
};
const TAG_SAMPLES: Record<string, Record<string, unknown>> = { Customers: { name: 'Repeat customers' } };
const BODY_SAMPLES: Record<string, unknown | ((serverUrl: string) => unknown)> = {
  // This service's debug sink: a subscription that works as pasted (the operator API shows what it caught); your endpoint in production.
  create_webhook: (serverUrl: string) => ({ url: `${serverUrl}/api/webhooks/sink`, events: ['order.created', 'order.status_changed'] }),
  update_order: { status: 'confirmed', admin_notes: 'Called the customer: the address is right' },
  // EXTENSIONS 8: each item is the body of POST /api/v1/shipments; one order here (a batch takes up to 1,000, none twice).
  create_shipment_batch: { items: [{ order_id: '<order_id>' }] },
  update_product: { price: 13.9 },
  update_webhook: { events: ['order.created', 'order.status_changed', 'shipment.status_changed'] },
  verify_webhook_signature: {
    headers: { 'webhook-id': 'msg_2Pq7', 'webhook-timestamp': '1795000000', 'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' },
    body: '{"id":"3f1c2a9e-7b0d-4c55-9d0e-1a2b3c4d5e6f","event":"order.created"}',
  },
};

/** A plausible value of a schema: its example, a sample for its field, const, first enum member, or a value of its type (required fields only). */
export function exampleOf(schema: Schema | undefined, name = '', depth = 0, tag = ''): unknown {
  if (!schema || depth > 6) return null;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  const known = TAG_SAMPLES[tag]?.[name] ?? FIELD_SAMPLES[name];
  if (known !== undefined) return known;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return exampleOf(options.find((s: Schema) => s.type !== 'null') ?? options[0], name, depth + 1, tag);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required: string[] = schema.required ?? [];
      // An object with no required field still shows one, so the sample says what goes in it.
      const shown = required.length ? required : Object.keys(properties).slice(0, 1);
      return Object.fromEntries(shown.map((key) => [key, exampleOf(properties[key], key, depth + 1, tag)]));
    }
    case 'array':
      return [exampleOf(schema.items as Schema, name, depth + 1, tag)];
    case 'integer':
    case 'number': {
      // 1 when the range holds it (a range's minimum was -1000000 for a delivery's qty), else the nearest bound.
      const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
      return low !== undefined && low > 1 ? low : high !== undefined && high < 1 ? high : 1;
    }
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'uuid') return `<${name || 'id'}>`;
      if (schema.format && schema.format in FORMATS) return FORMATS[schema.format];
      return name ? `<${name}>` : 'text';
    default:
      return null;
  }
}

/** The body a sample sends. */
function bodyOf(route: DescribedRoute, serverUrl: string): unknown {
  const sample = BODY_SAMPLES[route.name];
  if (typeof sample === 'function') return sample(serverUrl);
  return sample ?? exampleOf(route.body as Schema, '', 0, route.tags?.[0]);
}

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function requiredQuery(route: DescribedRoute): Record<string, unknown> {
  const query = route.query as Schema | undefined;
  if (!query?.properties) return {};
  return Object.fromEntries((query.required ?? []).map((name: string) => [name, exampleOf(query.properties[name], name)]));
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** curl: the method, the URL with `<param>` where a path parameter goes, the key from $MERX_KEY, the body. */
function curlSample(route: DescribedRoute, serverUrl: string): string {
  const path = openApiPath(route.path).replace(/\{([A-Za-z_]+)\}/g, '<$1>');
  // A placeholder stays readable (<id>), a value is encoded.
  const query = Object.entries(requiredQuery(route))
    .map(([k, v]) => `${k}=${/^<\w+>$/.test(String(v)) ? v : encodeURIComponent(String(v))}`)
    .join('&');
  const lines = [`curl -X ${route.method} "${serverUrl}${path}${query ? `?${query}` : ''}"`];
  if (!route.public) lines.push('-H "Authorization: Bearer $MERX_KEY"');
  if (route.body) {
    lines.push("-H 'content-type: application/json'");
    lines.push(`-d ${shellQuote(JSON.stringify(bodyOf(route, serverUrl)))}`);
  }
  if (route.produces && route.produces !== 'application/json') lines.push('-o answer.pdf');
  return lines.join(' \\\n  ');
}

/** merx-client: the typed call, path parameters and body in the shapes the client's types check. */
function clientSample(route: DescribedRoute, serverUrl: string): string {
  const pathParams = [...openApiPath(route.path).matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]);
  const params: string[] = [];
  if (pathParams.length) params.push(`path: { ${pathParams.map((p) => `${p}: '<${p}>'`).join(', ')} }`);
  const query = requiredQuery(route);
  if (Object.keys(query).length) params.push(`query: ${JSON.stringify(query)}`);
  const options: string[] = [];
  if (params.length) options.push(`params: { ${params.join(', ')} }`);
  if (route.body) options.push(`body: ${JSON.stringify(bodyOf(route, serverUrl), null, 2).replace(/\n/g, '\n  ')}`);
  if (route.produces && route.produces !== 'application/json') options.push("parseAs: 'blob'");
  const call = `merx.${route.method}('${openApiPath(route.path)}'${options.length ? `, {\n  ${options.join(',\n  ')},\n}` : ''})`;
  return [
    "import { createMerxClient } from 'merx-client';",
    '',
    `const merx = createMerxClient({ baseUrl: '${serverUrl}', apiKey: process.env.MERX_KEY });`,
    `const { data, error } = await ${call};`,
    'if (error) throw new Error(error.error.message);',
  ].join('\n');
}

export function codeSamples(route: DescribedRoute, serverUrl: string): CodeSample[] {
  return [
    { lang: 'Shell', label: 'curl', source: curlSample(route, serverUrl) },
    { lang: 'JavaScript', label: 'merx-client', source: clientSample(route, serverUrl) },
  ];
}
