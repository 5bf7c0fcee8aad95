// The frame every page of the docs shares (issue 41): one bar with the same
// links on guides and references, and one search over all of it (the guides'
// sections, every REST operation and webhook, every MCP tool, the operator
// API), answered in the browser from /docs/search.json. Redoc's own search
// is off on the reference pages, so there is one search, not one per page.

export const SITE_SCRIPT_URL = '/docs/site.js';
export const SEARCH_INDEX_URL = '/docs/search.json';

export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
export const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The bar's links: [label, short label for a phone, href]. */
export const SITE_LINKS: Array<[string, string, string]> = [
  ['Guides', 'Guides', '/docs/guides/getting-started'],
  ['REST API', 'REST', '/docs'],
  ['MCP tools', 'MCP', '/docs/mcp'],
  ['Operator API', 'Operator', '/admin/docs'],
  ['Console', 'Console', '/admin'],
];

/** Which bar link a page belongs to (a guide's page is under Guides). */
const sectionOf = (path: string) => (path.startsWith('/docs/guides/') ? '/docs/guides/getting-started' : path);

/** The bar: two rows on a phone (links under the name and the search), one at desktop widths; it never scrolls sideways. */
export const SITE_CSS = `
body{margin:0;font-family:${FONT};color:#1c2230}
.bar{position:fixed;top:0;left:0;right:0;z-index:20;display:flex;flex-wrap:wrap;align-items:center;column-gap:20px;row-gap:4px;padding:8px 20px;min-height:36px;background:#161b26;color:#fff;font-size:14px}
.bar .brand{font-size:16px;font-weight:600;color:#fff;text-decoration:none;margin-right:8px}
.bar nav{display:flex;gap:18px;flex-wrap:wrap}
.bar nav a{color:#cfd6e4;text-decoration:none;white-space:nowrap}.bar nav a:hover{color:#fff}.bar nav a[aria-current]{color:#fff;font-weight:600}
.bar .short{display:none}
[id^="tool-"]{scroll-margin-top:64px}
.search{position:relative;margin-left:auto}
.search input{width:300px;box-sizing:border-box;padding:6px 10px;border-radius:6px;border:1px solid #3a4256;background:#222a3a;color:#fff;font:inherit}
.search input::placeholder{color:#9aa4b8}
.search ol{position:absolute;right:0;top:36px;width:480px;max-height:70vh;overflow-y:auto;margin:0;padding:4px 0;list-style:none;background:#fff;color:#1c2230;border:1px solid #d0d5df;border-radius:8px;box-shadow:0 8px 24px rgba(0,0,0,.18)}
.search li a{display:block;padding:8px 12px;color:inherit;text-decoration:none}.search li a:hover,.search li a:focus,.search li[aria-selected] a{background:#eef2ff}
.search li small{display:block;color:#5b6478;font-size:12px;margin-top:2px}
.search .none{padding:8px 12px;color:#5b6478}
@media (max-width:760px){
  .bar{padding:8px 12px;column-gap:12px}
  .bar nav{order:3;width:100%;gap:14px}
  .bar .long{display:none}.bar .short{display:inline}
  .search{flex:1;min-width:0}.search input{width:100%}
  .search ol{width:calc(100vw - 24px);right:auto;left:0}
}
`;

export function siteBar(path: string): string {
  const current = sectionOf(path);
  const links = SITE_LINKS.map(
    ([label, short, href]) =>
      `<a href="${href}"${href === current ? ' aria-current="page"' : ''}><span class="long">${escapeHtml(label)}</span><span class="short">${escapeHtml(short)}</span></a>`,
  ).join('');
  return (
    `<header class="bar"><a class="brand" href="/docs/guides/getting-started">Merx docs</a><nav aria-label="Docs">${links}</nav>` +
    `<form class="search" role="search" action="javascript:void 0"><input id="docs-search" type="search" autocomplete="off" placeholder="Search guides and reference" aria-label="Search guides and reference" aria-controls="docs-results"><ol id="docs-results" hidden></ol></form></header>`
  );
}

/**
 * The search, in the browser: every word typed must be in an entry's title,
 * where or text; title matches rank first. Enter opens the first result.
 */
export const SITE_SCRIPT = `(() => {
  const input = document.getElementById('docs-search');
  const list = document.getElementById('docs-results');
  if (!input || !list) return;
  let entries = null;
  const load = () => entries ??= fetch(${JSON.stringify(SEARCH_INDEX_URL)}).then((r) => r.json()).then((b) => b.entries.map((e) => ({ ...e, hay: (e.title + ' ' + e.where + ' ' + e.text).toLowerCase(), head: e.title.toLowerCase() })));
  const show = (found, query) => {
    list.replaceChildren();
    if (!query) { list.hidden = true; return; }
    if (!found.length) { const li = document.createElement('li'); li.className = 'none'; li.textContent = 'Nothing found for "' + query + '"'; list.append(li); }
    for (const e of found) {
      const li = document.createElement('li'); const a = document.createElement('a'); a.href = e.url; a.textContent = e.title;
      const small = document.createElement('small'); small.textContent = e.where; a.append(small); li.append(a); list.append(li);
    }
    list.hidden = false;
  };
  const run = async () => {
    const query = input.value.trim().toLowerCase();
    if (!query) return show([], '');
    const words = query.split(/\\s+/);
    const all = await load();
    const scored = [];
    for (const e of all) {
      if (!words.every((w) => e.hay.includes(w))) continue;
      scored.push([words.filter((w) => e.head.includes(w)).length * 10 - e.rank, e]);
    }
    scored.sort((a, b) => b[0] - a[0]);
    show(scored.slice(0, 15).map((s) => s[1]), input.value.trim());
  };
  input.addEventListener('input', run);
  input.addEventListener('focus', () => { load(); if (input.value) run(); });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { const first = list.querySelector('a'); if (first) location.href = first.href; }
    if (event.key === 'Escape') { input.value = ''; show([], ''); }
  });
  document.addEventListener('click', (event) => { if (!event.target.closest('.search')) list.hidden = true; });
  list.addEventListener('click', () => { list.hidden = true; });
  // A place Redoc does not know (an MCP tool's heading in a section's text): scrolled to once Redoc has drawn it.
  // Redoc first moves to the section around it and rewrites the address, so the heading is sought again once it has.
  const seek = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    if (!id.startsWith('tool-')) return;
    let tries = 0;
    const look = () => {
      const el = document.getElementById(id);
      if (!el) { if (++tries < 100) setTimeout(look, 100); return; }
      el.scrollIntoView();
      setTimeout(() => { el.scrollIntoView(); history.replaceState(null, '', '#' + id); }, 400);
    };
    look();
  };
  window.addEventListener('hashchange', seek);
  seek();
  // On a phone the guides' sidebar starts folded.
  const side = document.querySelector('.side details');
  if (side && matchMedia('(max-width:760px)').matches) side.open = false;
})();
`;

export interface SearchEntry {
  title: string;
  /** Where it is: the guide's title, or the reference it is in. */
  where: string;
  url: string;
  text: string;
  /** Among equal matches, lower comes first (guides before reference). */
  rank: number;
}

type Operations = Record<string, Record<string, { operationId?: string; summary?: string; description?: string; tags?: string[] }>>;

/** Redoc's anchor of an operation: #tag/<first tag>/operation/<operationId>. */
const redocAnchor = (tag: string | undefined, id: string) =>
  `#tag/${encodeURIComponent((tag ?? '').replace(/ /g, '-'))}/operation/${encodeURIComponent(id)}`;

const firstSentences = (text = '') => text.replace(/\s+/g, ' ').slice(0, 400);

/** An OpenAPI document's operations (and webhooks) as search entries of the page that renders it. */
export function referenceEntries(doc: { paths?: unknown; webhooks?: unknown }, page: string, where: string): SearchEntry[] {
  const entries: SearchEntry[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Operations)) {
    for (const [method, op] of Object.entries(item)) {
      const id = op.operationId ?? `${method}-${path}`;
      entries.push({
        title: op.summary ?? id,
        where: `${where} · ${method.toUpperCase()} ${path}`,
        url: page + redocAnchor(op.tags?.[0], id),
        text: `${id} ${firstSentences(op.description)}`,
        rank: 2,
      });
    }
  }
  for (const [name, item] of Object.entries((doc.webhooks ?? {}) as Operations)) {
    const op = item.post;
    entries.push({
      title: `${name}: ${op.summary ?? ''}`,
      where: `${where} · webhook`,
      url: `${page}#/paths/${encodeURIComponent(name)}/post`,
      text: `${name} webhook event ${firstSentences(op.description)}`,
      rank: 2,
    });
  }
  return entries;
}
