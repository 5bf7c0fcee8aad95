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
  const short: Record<string, string> = { 'Receiving webhooks': 'Webhooks guide', 'MCP clients': 'MCP', 'Running Merx': 'Operations' };
  return [
    ['API reference', DOCS_PAGES.reference],
    ...guides.map((g): [string, string] => [short[g.title] ?? g.title, guideUrl(g.slug)]),
  ];
}

/**
 * The REST reference in three pages, by area, so that none is an endless
 * scroll (all of it on one page measured 110,000 pixels): each holds its
 * operations, the shared schemas, and a bar to the others. /docs, the first,
 * also holds the introduction (authentication, conventions, errors).
 */
export const REFERENCE_PAGES = [
  { path: '/docs', title: 'Orders and shipments', tags: ['Orders', 'Shipments', 'Service'] },
  { path: '/docs/reference/catalog', title: 'Products, stock and customers', tags: ['Products', 'Inventory', 'Customers'] },
  { path: '/docs/reference/webhooks', title: 'Events and webhooks', tags: ['Events', 'Webhooks'] },
] as const;

type Paths = Record<string, Record<string, { tags: string[] }>>;

/** One page of the reference: the operations whose first tag is one of `tags` (the last page takes any tag no page names). */
export function referenceDocument(publicDoc: OpenApiDocument, guides: GuideText[], page: (typeof REFERENCE_PAGES)[number]) {
  const named = new Set<string>(REFERENCE_PAGES.flatMap((p) => p.tags));
  const last = page === REFERENCE_PAGES[REFERENCE_PAGES.length - 1];
  const onPage = (tag: string) => (page.tags as readonly string[]).includes(tag) || (last && !named.has(tag));
  const paths: Paths = {};
  for (const [path, item] of Object.entries(publicDoc.paths as Paths)) {
    const ops = Object.entries(item).filter(([, op]) => onPage(op.tags[0]));
    if (ops.length) paths[path] = Object.fromEntries(ops);
  }
  const tags = [...new Set(Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.tags[0])))];
  const link = (title: string) => {
    const guide = guides.find((g) => g.title === title);
    return guide ? `[${title}](${guideUrl(guide.slug)})` : title;
  };
  const pages = REFERENCE_PAGES.map((p) => (p === page ? `**${p.title}**` : `[${p.title}](${p.path})`)).join(' · ');
  const intro = [
    `The REST reference, in three pages: ${pages}. Each operation has a request sample with curl and with the typed client \`merx-client\`.`,
    `New here? ${link('Getting started')} takes you from a first key to a first call, webhook and MCP client;`,
    `the rules every answer keeps are in ${link('The contract')}; every MCP tool, with its input schema, is on the [MCP page](${DOCS_PAGES.tools}).`,
  ].join(' ');
  const { webhooks, ...rest } = publicDoc as OpenApiDocument & { webhooks?: unknown };
  return {
    ...rest,
    ...(page.path === '/docs/reference/webhooks' && webhooks ? { webhooks } : {}),
    info: { ...publicDoc.info, title: `Merx API: ${page.title}`, description: page.path === '/docs' ? `${intro}\n\n${publicDoc.info.description}` : intro },
    paths,
    tags: tags.map((name) => ({ name })),
    'x-tagGroups': [{ name: page.title, tags }],
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
    ...REFERENCE_PAGES.map((page) => ({ path: page.path, title: `Merx API: ${page.title}`, document: referenceDocument(publicDoc, guides, page) as object })),
    { path: DOCS_PAGES.mcp, title: 'Merx MCP server', document: mcpDocument(publicDoc, operations, guides) as object },
    ...guides.filter((g) => g.slug !== 'mcp').map((g) => ({ path: guideUrl(g.slug), title: `Merx: ${g.title}`, document: guideDocument(publicDoc, g) as object })),
  ];
}

export { GUIDES };
