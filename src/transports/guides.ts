// The Markdown guides of docs/, for the reference at /docs: read once at
// start, with links between guides turned into links to their sections there.
import fs from 'node:fs';
import path from 'node:path';

export const DOCS_DIR = path.join(import.meta.dirname, '../../docs');

export interface Guide {
  file: string;
  /** The section's name at /docs (an OpenAPI tag of its own). */
  title: string;
}

/** In reading order. */
export const GUIDES: Guide[] = [
  { file: 'getting-started.md', title: 'Getting started' },
  { file: 'webhooks.md', title: 'Receiving webhooks' },
  { file: 'integrator-safety.md', title: 'Integrator safety' },
  { file: 'mcp.md', title: 'MCP clients' },
  { file: 'operations.md', title: 'Running Merx' },
  { file: 'operator-console.md', title: 'Operator console' },
  { file: 'contract.md', title: 'The contract' },
];

/** Redoc's anchor for a tag's section. */
export const sectionAnchor = (title: string) => `#tag/${title.replace(/ /g, '-')}`;

/**
 * A guide's Markdown for /docs: its first heading is the section's title (so
 * it goes), links to other guides point at their sections, links to other
 * repository files become plain text, and pictures stay in the repository.
 */
export function guideMarkdown(markdown: string): string {
  const anchors = new Map(GUIDES.map((g) => [g.file, sectionAnchor(g.title)]));
  return markdown
    .replace(/^# .*\n+/, '')
    .replace(/!\[[^\]]*\]\([^)]*\)\n?/g, '')
    .replace(/\[([^\]]+)\]\(([^)#\s]+\.md)(#[^)]*)?\)/g, (whole, text: string, target: string) => {
      const anchor = anchors.get(path.basename(target));
      if (anchor) return `[${text}](${anchor})`;
      return /^https?:/.test(target) ? whole : `${text} (\`${target.replace(/^(\.\.\/)+/, '')}\` in the repository)`;
    });
}

/** The guides that exist in this installation, as Markdown for /docs. */
export function loadGuides(dir = DOCS_DIR): Array<Guide & { markdown: string }> {
  return GUIDES.filter((g) => fs.existsSync(path.join(dir, g.file))).map((g) => ({
    ...g,
    markdown: guideMarkdown(fs.readFileSync(path.join(dir, g.file), 'utf8')),
  }));
}
