// Request samples for every operation of the public reference (issue 28):
// Redoc's `x-codeSamples`, one with curl and one with the typed client
// `merx-client`, written here from the operation's declaration (method, path,
// parameters, body schema), so they follow the registry like the rest of the
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
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2026-11-01T00:00:00Z',
  date: '2026-11-01',
  email: 'ana@example.com',
  uri: 'https://your-shop.example/hooks/merx',
};

/** A plausible value of a schema: its example, const, first enum member, or a value of its type (required fields only). */
export function exampleOf(schema: Schema | undefined, name = '', depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return exampleOf(options.find((s: Schema) => s.type !== 'null') ?? options[0], name, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required: string[] = schema.required ?? [];
      // An object with no required field still shows one, so the sample says what goes in it.
      const shown = required.length ? required : Object.keys(properties).slice(0, 1);
      return Object.fromEntries(shown.map((key) => [key, exampleOf(properties[key], key, depth + 1)]));
    }
    case 'array':
      return [exampleOf(schema.items as Schema, name, depth + 1)];
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return true;
    case 'string':
      if (schema.format && schema.format in FORMATS) return FORMATS[schema.format];
      return name ? `<${name}>` : 'text';
    default:
      return null;
  }
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
  const query = new URLSearchParams(Object.entries(requiredQuery(route)).map(([k, v]) => [k, String(v)])).toString();
  const lines = [`curl -X ${route.method} "${serverUrl}${path}${query ? `?${query}` : ''}"`];
  if (!route.public) lines.push('-H "Authorization: Bearer $MERX_KEY"');
  if (route.body) {
    lines.push("-H 'content-type: application/json'");
    lines.push(`-d ${shellQuote(JSON.stringify(exampleOf(route.body as Schema)))}`);
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
  if (route.body) options.push(`body: ${JSON.stringify(exampleOf(route.body as Schema), null, 2).replace(/\n/g, '\n  ')}`);
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
