// The document /docs renders: the public OpenAPI document plus, as sections of
// their own, the Markdown guides and every MCP tool with its input schema.
// The tools come from the operation registry, the same place tools/list gets
// them, so the listing cannot drift from what the server serves.
import type { Operation } from '../platform/operation.ts';
import { sectionAnchor, type Guide } from './guides.ts';
import { toolInputSchema } from './tool-schema.ts';

type OpenApiDocument = ReturnType<typeof import('./openapi.ts').buildOpenApiDocument>;

export const MCP_TOOLS_SECTION = 'MCP tools';

const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');
export const toolArgumentsComponent = (tool: string) => `mcp_${tool}_arguments`;

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
    'Every operation below is a tool of the MCP server at `POST /api/mcp`, generated from the same registry as the REST routes, so this',
    'list is what `tools/list` answers for a key that holds every scope (a key sees only the tools its scopes allow). Arguments are the',
    'REST parameters in one object under their REST names; `structuredContent` is the REST answer. Connecting a client: see',
    `[MCP clients](${sectionAnchor('MCP clients')}).`,
    '',
    '| tool | REST twin | what it does |',
    '|---|---|---|',
    ...rows,
    '',
    ...sections,
  ].join('\n');
}

export function docsDocument(publicDoc: OpenApiDocument, operations: Operation[], guides: Array<Guide & { markdown: string }>) {
  const operationTags = [...new Set(Object.values(publicDoc.paths).flatMap((item) => Object.values(item as Record<string, { tags: string[] }>).flatMap((op) => op.tags)))];
  const schemas: Record<string, unknown> = { ...publicDoc.components.schemas };
  for (const op of operations.filter((o) => o.mcp !== false)) schemas[toolArgumentsComponent(op.name)] = toolInputSchema(op);
  const guideTags = guides.map((g) => ({ name: g.title, description: g.markdown, 'x-traitTag': true }));
  const mcpGuide = guideTags.find((t) => t.name === 'MCP clients');
  const intro = [
    `New here? [Getting started](${sectionAnchor('Getting started')}) takes you from a first key to a first call, webhook and MCP client.`,
    `The rules every answer keeps are in [The contract](${sectionAnchor('The contract')}); every MCP tool is listed under [MCP tools](${sectionAnchor(MCP_TOOLS_SECTION)}).`,
    '',
  ].join(' ');
  return {
    ...publicDoc,
    info: { ...publicDoc.info, description: `${intro}\n\n${publicDoc.info.description}` },
    tags: [...guideTags, ...operationTags.map((name) => ({ name })), { name: MCP_TOOLS_SECTION, description: toolsMarkdown(operations), 'x-traitTag': true }],
    'x-tagGroups': [
      { name: 'Guides', tags: guideTags.filter((t) => t !== mcpGuide).map((t) => t.name) },
      { name: 'REST API', tags: operationTags },
      { name: 'MCP', tags: [...(mcpGuide ? [mcpGuide.name] : []), MCP_TOOLS_SECTION] },
    ],
    components: { ...publicDoc.components, schemas },
  };
}
