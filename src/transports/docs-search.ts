// What the docs' one search finds (issue 41): the guides' sections, every
// operation and webhook of the REST reference, every MCP tool and every
// operator API route, each with the address of the page and place it is on.
import { fullDescription, type Operation } from '../platform/operations/operation.ts';
import { referenceEntries, type SearchEntry } from './docs-site.ts';
import { DOCS_PAGES } from './docs-document.ts';
import { guideEntries, type GuideText } from './guide-page.ts';

export function docsSearch(parts: { guides: GuideText[]; publicDoc: object; operations: Operation[]; operatorDoc: object }): SearchEntry[] {
  const tools = parts.operations
    .filter((op) => op.mcp !== false)
    .map((op) => ({
      title: op.name,
      where: 'MCP tool',
      url: `${DOCS_PAGES.mcp}#tool-${op.name}`,
      text: `${op.summary} ${fullDescription(op).replace(/\s+/g, ' ').slice(0, 300)}`,
      rank: 3,
    }));
  return [
    ...parts.guides.flatMap(guideEntries),
    ...referenceEntries(parts.publicDoc, DOCS_PAGES.reference, 'REST API'),
    ...tools,
    ...referenceEntries(parts.operatorDoc, '/admin/docs', 'Operator API').map((e) => ({ ...e, rank: 4 })),
  ];
}
