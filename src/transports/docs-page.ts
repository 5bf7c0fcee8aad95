// The API reference pages, rendered in the browser by Redoc from an OpenAPI
// document: /docs (the public API, its guides and MCP tools) and /admin/docs
// (the operator API). Redoc's standalone bundle is served from node_modules:
// nothing is fetched from a CDN, so the docs work offline.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

const REDOC_BUNDLE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
export const REDOC_URL = '/docs/redoc.standalone.js';
const INIT_URL = '/docs/reference.js';

/**
 * Only this origin: Redoc's sidebar credit points an <img> at Redocly's CDN,
 * which the policy keeps the browser from fetching (the page stays offline and
 * tells no third party who reads it). Redoc injects styles and runs its
 * search index in a worker from a blob.
 */
const POLICY = [
  "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
  "worker-src 'self' blob:", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'",
].join('; ');

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

/** Redoc's options: system fonts (no web fonts to fetch), success answers open, samples expanded. */
const REDOC_OPTIONS = {
  scrollYOffset: 48,
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  requiredPropsFirst: true,
  pathInMiddlePanel: true,
  expandSingleSchemaField: true,
  theme: {
    colors: { primary: { main: '#3b5bdb' } },
    typography: { fontFamily: FONT, fontSize: '15px', headings: { fontFamily: FONT, fontWeight: '600' }, code: { fontFamily: MONO } },
    sidebar: { width: '280px' },
  },
};

export interface ReferencePage {
  title: string;
  /** Where the page is served (marks its own link in the bar). */
  path?: string;
  specUrl: string;
  /** Links in the bar above the reference. */
  links: Array<[label: string, href: string]>;
}

export function renderReferencePage(page: ReferencePage): string {
  const links = page.links.map(([label, href]) => `<a href="${escape(href)}"${href === page.path ? ' aria-current="page"' : ''}>${escape(label)}</a>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(page.title)}</title>
<link rel="icon" href="data:,">
<style>
body{margin:0;font-family:${FONT}}
.bar{position:fixed;top:0;left:0;right:0;height:48px;z-index:10;display:flex;align-items:center;gap:20px;padding:0 20px;background:#161b26;color:#fff;font-size:14px;overflow-x:auto;white-space:nowrap}
.bar strong{font-size:16px;margin-right:auto}.bar a[aria-current]{color:#fff;font-weight:600}.bar a{color:#cfd6e4;text-decoration:none}.bar a:hover{color:#fff}
#reference{padding-top:48px}
noscript{display:block;padding:80px 20px}
</style>
</head>
<body>
<nav class="bar" aria-label="Merx"><strong>${escape(page.title)}</strong>${links}</nav>
<noscript>The reference needs JavaScript. The machine-readable document is at <a href="${escape(page.specUrl)}">${escape(page.specUrl)}</a>.</noscript>
<div id="reference"></div>
<script src="${REDOC_URL}"></script>
<script src="${INIT_URL}" data-spec="${escape(page.specUrl)}"></script>
</body>
</html>`;
}

const INIT_SCRIPT = `const me = document.currentScript;
Redoc.init(me.dataset.spec, ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('reference'));
`;

export function registerReferencePages(app: FastifyInstance, pages: Record<string, ReferencePage>): void {
  app.get(REDOC_URL, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=86400').send(fs.createReadStream(REDOC_BUNDLE)),
  );
  app.get(INIT_URL, async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(INIT_SCRIPT));
  for (const [path, page] of Object.entries(pages)) {
    const html = renderReferencePage(page);
    app.get(path, async (_request, reply) => reply.type('text/html; charset=utf-8').header('Content-Security-Policy', POLICY).send(html));
  }
}

/**
 * /docs as several pages (issue 28: one page of everything was 180,000 pixels
 * tall): the REST reference at /docs, the MCP page, one page per guide, each
 * over its own document at <page>/openapi.json (the reference's at
 * /docs/openapi.json), with a bar linking them all.
 */
export function registerDocsPages(
  app: FastifyInstance,
  pages: Array<{ path: string; title: string; document: object }>,
  links: Array<[string, string]>,
): Record<string, ReferencePage> {
  const served: Record<string, ReferencePage> = {};
  for (const page of pages) {
    const specUrl = `${page.path}/openapi.json`;
    app.get(specUrl, async () => page.document);
    served[page.path] = { title: page.title, path: page.path, specUrl, links };
  }
  return served;
}
