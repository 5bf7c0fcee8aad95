// The docs site: the API references, rendered in the browser by Redoc from an
// OpenAPI document, one page per API (/docs the REST API, /docs/mcp the MCP
// tools, /admin/docs the operator API), and the guides (guide-page.ts), all in
// one frame with one search (docs-site.ts). Redoc's standalone bundle is
// served from node_modules: nothing is fetched from a CDN, so the docs work offline.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import {
  escapeHtml as escape,
  FONT,
  MONO,
  SEARCH_INDEX_URL,
  SITE_CSS,
  SITE_SCRIPT,
  SITE_SCRIPT_URL,
  siteBar,
  type SearchEntry,
} from './docs-site.ts';
import { renderGuidePage, type GuideText } from './guide-page.ts';
import { guideUrl } from './guides.ts';

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
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Redoc's options: system fonts (no web fonts to fetch), success answers open,
 * samples expanded, below the site's bar (its height, whichever row count it
 * has), and no search of its own: the bar's searches everything.
 */
const REDOC_OPTIONS = {
  scrollYOffset: '.bar',
  disableSearch: true,
  hideDownloadButton: false,
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
  /** Where the page is served. */
  path: string;
  specUrl: string;
}

export function renderReferencePage(page: ReferencePage): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(page.title)}</title>
<link rel="icon" href="data:,">
<style>
${SITE_CSS}
#reference{padding-top:52px}
#reference pre,#reference pre code{white-space:pre-wrap!important;overflow-wrap:anywhere}
@media (max-width:760px){#reference{padding-top:84px}}
noscript{display:block;padding:80px 20px}
</style>
</head>
<body>
${siteBar(page.path)}
<noscript>The reference needs JavaScript. The machine-readable document is at <a href="${escape(page.specUrl)}">${escape(page.specUrl)}</a>.</noscript>
<div id="reference"></div>
<script src="${REDOC_URL}"></script>
<script src="${INIT_URL}" data-spec="${escape(page.specUrl)}"></script>
<script src="${SITE_SCRIPT_URL}"></script>
</body>
</html>`;
}

const INIT_SCRIPT = `const me = document.currentScript;
Redoc.init(me.dataset.spec, ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('reference'));
`;

const html = (body: string) => async (_request: unknown, reply: import('fastify').FastifyReply) =>
  reply.type('text/html; charset=utf-8').header('Content-Security-Policy', POLICY).send(body);

export interface DocsSite {
  /** The Redoc pages, each with the document it renders (served at its specUrl unless `served`). */
  references: Array<ReferencePage & { document?: object }>;
  guides: GuideText[];
  /** Everything the bar's search finds. */
  search: SearchEntry[];
}

export function registerDocsSite(app: FastifyInstance, site: DocsSite): void {
  app.get(REDOC_URL, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('Cache-Control', 'public, max-age=86400').send(fs.createReadStream(REDOC_BUNDLE)),
  );
  app.get(INIT_URL, async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(INIT_SCRIPT));
  app.get(SITE_SCRIPT_URL, async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(SITE_SCRIPT));
  const index = { entries: site.search };
  app.get(SEARCH_INDEX_URL, async () => index);
  for (const page of site.references) {
    if (page.document) {
      const document = page.document;
      app.get(page.specUrl, async () => document);
    }
    app.get(page.path, html(renderReferencePage(page)));
  }
  for (const guide of site.guides) app.get(guideUrl(guide.slug), html(renderGuidePage(guide, site.guides)));
}
