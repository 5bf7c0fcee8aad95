// The documents Redoc renders at /docs, one page per API (issue 41): the REST
// reference (the public OpenAPI document with its webhooks) and the MCP tools
// (every tool with its input schema). The tools come from the operation
// registry, the same place tools/list gets them, so the listing cannot drift
// from what the server serves. The guides are pages of their own (guide-page.ts).
import { fullDescription, type Operation } from '../platform/operations/operation.ts';
import { GUIDES, guideUrl } from './guides.ts';
import type { GuideText } from './guide-page.ts';
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
      fullDescription(op),
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

export type { GuideText };

/**
 * The REST reference, one page (issue 41: split in three, a search on /docs
 * found nothing about webhooks): every operation and every webhook, the
 * introduction (authentication, conventions, errors) first, with links to
 * the guides.
 */
export function referenceDocument(publicDoc: OpenApiDocument, guides: GuideText[]) {
  const link = (title: string) => {
    const guide = guides.find((g) => g.title === title);
    return guide ? `[${title}](${guideUrl(guide.slug)})` : title;
  };
  const intro = [
    'Every operation has a request sample with curl and with the typed client `merx-client`, and a response sample.',
    `New here? ${link('Getting started')} takes you from a first key to a first call, webhook and MCP client;`,
    `the rules every answer keeps are in ${link('The contract')}; every MCP tool, with its input schema, is on the [MCP tools page](${DOCS_PAGES.mcp}).`,
  ].join(' ');
  return { ...publicDoc, info: { ...publicDoc.info, title: 'Merx REST API', description: `${intro}\n\n${publicDoc.info.description}` } };
}

/** /docs/mcp: the MCP server's reference, every tool and its input schema (connecting a client is the MCP guide). */
export function mcpDocument(publicDoc: OpenApiDocument, operations: Operation[], guides: GuideText[]) {
  const schemas: Record<string, unknown> = {};
  for (const op of operations.filter((o) => o.mcp !== false)) schemas[toolArgumentsComponent(op.name)] = toolInputSchema(op);
  const guide = guides.find((g) => g.slug === 'mcp');
  const server = `${publicDoc.servers[0].url}/api/mcp`;
  const description = [
    `The MCP server is \`POST ${server}\`: JSON-RPC 2.0 over Streamable HTTP, with the same API key as the REST API (\`Authorization: Bearer\`).`,
    guide
      ? `Connecting Claude Desktop, Claude Code, Cursor, the MCP Inspector or the SDK is in the [MCP clients guide](${guideUrl(guide.slug)}).`
      : '',
  ].join(' ');
  return {
    openapi: publicDoc.openapi,
    info: { title: 'Merx MCP server', version: publicDoc.info.version, description },
    servers: publicDoc.servers,
    paths: {},
    tags: [{ name: MCP_TOOLS_SECTION, description: toolsMarkdown(operations), 'x-traitTag': true }],
    components: { schemas },
  };
}

/** The Redoc pages of /docs: the REST reference and the MCP tools, one page per API. */
export function docsPages(publicDoc: OpenApiDocument, operations: Operation[], guides: GuideText[]) {
  return [
    { path: DOCS_PAGES.reference, title: 'Merx REST API', document: referenceDocument(publicDoc, guides) as object },
    { path: DOCS_PAGES.mcp, title: 'Merx MCP tools', document: mcpDocument(publicDoc, operations, guides) as object },
  ];
}

export { GUIDES };
