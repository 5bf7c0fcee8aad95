// The Markdown guides of docs/, for /docs: read once at start, each served as
// a page of its own, with links between guides turned into links to their pages.
import fs from 'node:fs';
import path from 'node:path';

export const DOCS_DIR = path.join(import.meta.dirname, '../../docs');

export interface Guide {
  file: string;
  /** The page's title at /docs. */
  title: string;
  /** Where it is served: /docs/guides/<slug>. */
  slug: string;
}

/** In reading order. */
export const GUIDES: Guide[] = [
  { file: 'getting-started.md', title: 'Getting started', slug: 'getting-started' },
  { file: 'webhooks.md', title: 'Receiving webhooks', slug: 'webhooks' },
  { file: 'integrator-safety.md', title: 'Integrator safety', slug: 'integrator-safety' },
  { file: 'shipping-a-day.md', title: "Ship a day's orders", slug: 'shipping-a-day' },
  { file: 'exports.md', title: 'Load everything, then follow', slug: 'exports' },
  { file: 'mcp.md', title: 'MCP clients', slug: 'mcp' },
  { file: 'operations.md', title: 'Running Merx', slug: 'operations' },
  { file: 'operator-console.md', title: 'Operator console', slug: 'operator-console' },
  { file: 'contract.md', title: 'The contract', slug: 'contract' },
];

/** The page a guide is served on. */
export const guideUrl = (slug: string) => `/docs/guides/${slug}`;

/** The address the guides are written for: `npm start`'s. */
export const WRITTEN_FOR = 'http://localhost:3000';

/**
 * A guide's Markdown for /docs: its first heading is the page's title (so it
 * goes), `npm start`'s address is this instance's (issue 41), links to other
 * guides point at their pages, links to other repository files become plain
 * text, and pictures stay in the repository.
 */
export function guideMarkdown(markdown: string, baseUrl = WRITTEN_FOR): string {
  const pages = new Map(GUIDES.map((g) => [g.file, guideUrl(g.slug)]));
  return markdown
    .replace(/^# .*\n+/, '')
    .replaceAll(WRITTEN_FOR, baseUrl)
    .replace(/!\[[^\]]*\]\([^)]*\)\n?/g, '')
    .replace(/\[([^\]]+)\]\(([^)#\s]+\.md)(#[^)]*)?\)/g, (whole, text: string, target: string, anchor?: string) => {
      const page = pages.get(path.basename(target));
      if (page) return `[${text}](${page}${anchor ?? ''})`;
      return /^https?:/.test(target) ? whole : `${text} (\`${target.replace(/^(\.\.\/)+/, '')}\` in the repository)`;
    });
}

/** The guides that exist in this installation, as Markdown for /docs. */
export function loadGuides(baseUrl = WRITTEN_FOR, dir = DOCS_DIR): Array<Guide & { markdown: string }> {
  return GUIDES.filter((g) => fs.existsSync(path.join(dir, g.file))).map((g) => ({
    ...g,
    markdown: guideMarkdown(fs.readFileSync(path.join(dir, g.file), 'utf8'), baseUrl),
  }));
}
