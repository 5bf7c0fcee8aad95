// The documents /docs renders, one per page so that none is one endless
// scroll (issue 28): the REST reference (the public OpenAPI document, its
// operations grouped in the navigation), the MCP page (connecting a client,
// then every MCP tool with its input schema) and one page per guide. The
// tools come from the operation registry, the same place tools/list gets
// them, so the listing cannot drift from what the server serves.
import type { Operation } from '../platform/operation.ts';
import { GUIDES, guideUrl, type Guide } from './guides.ts';
import { toolInputSchema } from './tool-schema.ts';

type OpenApiDocument = ReturnType<typeof import('./openapi.ts').buildOpenApiDocument>;

export const MCP_TOOLS_SECTION = 'MCP tools';

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');
export const toolArgumentsComponent = (tool: string) => `mcp_${tool}_arguments`;

/** Where each part lives, for links between pages. */
export const DOCS_PAGES = { reference: '/docs', mcp: '/docs/mcp', tools: '/docs/mcp#tag/MCP-tools' } as const;

function toolsMarkdown(operations: Operation[]): string {
  const tools = operations.filter((op) => op.mcp !== false);
  const restOf = (tool: string) =>
    operations
      .filter((op) => op.rest !== false && (op.mcp === false ? op.mcpVia === tool : op.name === tool))
      .map((op) => `\`${op.method} ${openApiPath(op.path)}\``);
  const rows = tools.map((op) => `| [\`${op.name}\`](#tool-${op.name}) | ${restOf(op.name).join(' or ') || 'MCP only'} | ${op.summary} |`);
  const sections = tools.map((op) => {
    const kind = op.annotations.readOnlyHint ? 'read-only' : op.dryRunOutput ? 'write, takes `dry_run: true`' : 'write';
    return [
      `<h3 id="tool-${op.name}"><code>${op.name}</code></h3>`,
      '',
      `**${op.summary}** · scope \`${op.scope}\` · ${kind} · REST: ${restOf(op.name).join(' or ') || 'none (MCP only)'}`,
      '',
      op.description,
      '',
      `<SchemaDefinition schemaRef="#/components/schemas/${toolArgumentsComponent(op.name)}" showReadOnly={true} showWriteOnly={true} />`,
    ].join('\n');
  });
  return [
    'Every operation of the [REST reference](/docs) is a tool of the MCP server at `POST /api/mcp`, generated from the same registry, so this',
    'list is what `tools/list` answers for a key that holds every scope (a key sees only the tools its scopes allow). Arguments are the',
    'REST parameters in one object under their REST names; `structuredContent` is the REST answer.',
    '',
    '| tool | REST twin | what it does |',
    '|---|---|---|',
    ...rows,
    '',
    ...sections,
  ].join('\n');
}

export type GuideText = Guide & { markdown: string };

/** The links every page's bar shows: the reference, the MCP page, each guide, the console. */
export function docsLinks(guides: GuideText[]): Array<[string, string]> {
  const short: Record<string, string> = { 'Receiving webhooks': 'Webhooks', 'MCP clients': 'MCP', 'Running Merx': 'Operations' };
  return [
    ['API reference', DOCS_PAGES.reference],
    ...guides.map((g): [string, string] => [short[g.title] ?? g.title, guideUrl(g.slug)]),
  ];
}

/** The REST reference at /docs: the public document, an introduction that points at the guides, operations grouped by area. */
export function referenceDocument(publicDoc: OpenApiDocument, guides: GuideText[]) {
  const operationTags = [...new Set(Object.values(publicDoc.paths).flatMap((item) => Object.values(item as Record<string, { tags: string[] }>).flatMap((op) => op.tags)))];
  const link = (title: string) => {
    const guide = guides.find((g) => g.title === title);
    return guide ? `[${title}](${guideUrl(guide.slug)})` : title;
  };
  const intro = [
    `New here? ${link('Getting started')} takes you from a first key to a first call, webhook and MCP client.`,
    `The rules every answer keeps are in ${link('The contract')}; every MCP tool, with its input schema, is on the [MCP page](${DOCS_PAGES.tools}).`,
    'Each operation below has a request sample with curl and with the typed client `merx-client`.',
  ].join(' ');
  const data = ['Orders', 'Shipments', 'Inventory', 'Products', 'Customers', 'Segments'];
  const groups = [
    { name: 'Commerce', tags: operationTags.filter((t) => data.includes(t)) },
    { name: 'Events and webhooks', tags: operationTags.filter((t) => /event|webhook/i.test(t)) },
  ];
  const grouped = new Set(groups.flatMap((g) => g.tags));
  groups.push({ name: 'More', tags: operationTags.filter((t) => !grouped.has(t)) });
  return {
    ...publicDoc,
    info: { ...publicDoc.info, description: `${intro}\n\n${publicDoc.info.description}` },
    tags: operationTags.map((name) => ({ name })),
    'x-tagGroups': groups.filter((g) => g.tags.length),
  };
}

/** /docs/mcp: connecting a client (the MCP guide), then every tool and its input schema. */
export function mcpDocument(publicDoc: OpenApiDocument, operations: Operation[], guides: GuideText[]) {
  const schemas: Record<string, unknown> = {};
  for (const op of operations.filter((o) => o.mcp !== false)) schemas[toolArgumentsComponent(op.name)] = toolInputSchema(op);
  const guide = guides.find((g) => g.slug === 'mcp');
  return {
    openapi: publicDoc.openapi,
    info: { title: 'Merx MCP server', version: publicDoc.info.version, description: guide?.markdown ?? '' },
    servers: publicDoc.servers,
    paths: {},
    tags: [{ name: MCP_TOOLS_SECTION, description: toolsMarkdown(operations), 'x-traitTag': true }],
    components: { schemas },
  };
}

/** One guide's page: its text as the document's description (Redoc lists its headings in the navigation). */
export function guideDocument(publicDoc: OpenApiDocument, guide: GuideText) {
  return { openapi: publicDoc.openapi, info: { title: guide.title, version: publicDoc.info.version, description: guide.markdown }, paths: {} };
}

/** Every page of /docs: its path, its title, its document. */
export function docsPages(publicDoc: OpenApiDocument, operations: Operation[], guides: GuideText[]) {
  return [
    { path: DOCS_PAGES.reference, title: 'Merx API', document: referenceDocument(publicDoc, guides) as object },
    { path: DOCS_PAGES.mcp, title: 'Merx MCP server', document: mcpDocument(publicDoc, operations, guides) as object },
    ...guides.filter((g) => g.slug !== 'mcp').map((g) => ({ path: guideUrl(g.slug), title: `Merx: ${g.title}`, document: guideDocument(publicDoc, g) as object })),
  ];
}

export { GUIDES };
