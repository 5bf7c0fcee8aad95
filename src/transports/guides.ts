// The Markdown guides of docs/, for /docs: read once at start, each served as
// a page of its own, with links between guides turned into links to their pages.
import fs from 'node:fs';
import path from 'node:path';

export const DOCS_DIR = path.join(import.meta.dirname, '../../docs');

export interface Guide {
  file: string;
  /** The page's title at /docs. */
  title: string;
  /** Where it is served: /docs/guides/<slug> (the MCP guide opens /docs/mcp, beside the tools). */
  slug: string;
}

/** In reading order. */
export const GUIDES: Guide[] = [
  { file: 'getting-started.md', title: 'Getting started', slug: 'getting-started' },
  { file: 'webhooks.md', title: 'Receiving webhooks', slug: 'webhooks' },
  { file: 'integrator-safety.md', title: 'Integrator safety', slug: 'integrator-safety' },
  { file: 'mcp.md', title: 'MCP clients', slug: 'mcp' },
  { file: 'operations.md', title: 'Running Merx', slug: 'operations' },
  { file: 'operator-console.md', title: 'Operator console', slug: 'operator-console' },
  { file: 'contract.md', title: 'The contract', slug: 'contract' },
];

/** The page a guide is served on. */
export const guideUrl = (slug: string) => (slug === 'mcp' ? '/docs/mcp' : `/docs/guides/${slug}`);

/** A heading as the navigation shows it: plain text (Redoc prints a heading's inline code as raw <code> in its sidebar). */
const plainHeading = (line: string) => line.replace(/`([^`]*)`/g, '$1').replace(/<[^>]+>/g, '');

/**
 * A guide's Markdown for /docs: its first heading is the page's title (so it
 * goes), headings are plain text, links to other guides point at their pages,
 * links to other repository files become plain text, and pictures stay in the
 * repository.
 */
export function guideMarkdown(markdown: string): string {
  const pages = new Map(GUIDES.map((g) => [g.file, guideUrl(g.slug)]));
  return markdown
    .replace(/^# .*\n+/, '')
    .replace(/^#{1,6} .*$/gm, plainHeading)
    .replace(/!\[[^\]]*\]\([^)]*\)\n?/g, '')
    .replace(/\[([^\]]+)\]\(([^)#\s]+\.md)(#[^)]*)?\)/g, (whole, text: string, target: string) => {
      const page = pages.get(path.basename(target));
      if (page) return `[${text}](${page})`;
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
