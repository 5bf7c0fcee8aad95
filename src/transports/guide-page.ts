// A guide of docs/ as a documentation page (issue 41: guides rendered as if
// each were an OpenAPI document showed "Getting started (1.0.0)", a download
// button and an empty dark panel): the Markdown rendered here once at start
// (marked), in the site's frame, with every guide and reference in the
// sidebar and the page's own sections under its title. Code wraps instead of
// scrolling sideways, tables scroll inside their own box on a phone.
import { Marked, type Tokens } from 'marked';
import { escapeHtml, MONO, SITE_CSS, SITE_LINKS, SITE_SCRIPT_URL, siteBar, type SearchEntry } from './docs-site.ts';
import { guideUrl, type Guide } from './guides.ts';

export type GuideText = Guide & { markdown: string };

/** A heading's anchor, as GitHub makes it (so links written for the repository keep working). */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

const plain = (markdown: string) =>
  markdown
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\*/g, '');

interface Section {
  depth: number;
  title: string;
  id: string;
  text: string;
}

/** The guide's sections (## and ###), each with its words, for the sidebar and the search. */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  let current: Section = { depth: 1, title: '', id: '', text: '' };
  for (const line of markdown.split('\n')) {
    const heading = /^(#{2,3}) (.*)$/.exec(line);
    if (heading) {
      current = { depth: heading[1].length, title: plain(heading[2]), id: headingId(plain(heading[2])), text: '' };
      sections.push(current);
    } else current.text += ` ${line}`;
  }
  if (sections.length === 0 || sections[0].id !== '') sections.unshift({ depth: 1, title: '', id: '', text: markdown.split(/\n#{2,3} /)[0] });
  return sections;
}

function render(markdown: string): string {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, { tokens, depth, text }: Tokens.Heading) {
        return `<h${depth} id="${escapeHtml(headingId(plain(text)))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
    },
  });
  // A wide table scrolls inside a box of its own, never the page.
  return marked
    .parse(markdown, { async: false })
    .replace(/<table>/g, '<div class="table"><table>')
    .replace(/<\/table>/g, '</table></div>');
}

const PAGE_CSS = `
.page{display:grid;grid-template-columns:260px minmax(0,1fr);gap:40px;max-width:1240px;margin:0 auto;padding:72px 24px 80px}
.side{position:sticky;top:72px;align-self:start;max-height:calc(100vh - 96px);overflow-y:auto;font-size:14px}
.side h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#5b6478;margin:18px 0 6px}
.side ul{list-style:none;margin:0;padding:0}.side li{margin:2px 0}
.side a{display:block;padding:4px 8px;border-radius:6px;color:#2b3345;text-decoration:none}.side a:hover{background:#eef2ff}
.side a[aria-current]{background:#e3e9ff;color:#1d3aa8;font-weight:600}
.side ul ul a{padding-left:20px;font-size:13px;color:#4a5266}
.side details summary{display:none}
article{min-width:0;max-width:820px;font-size:16px;line-height:1.6}
article h1{font-size:32px;margin:8px 0 16px}article h2{margin-top:40px;font-size:24px}article h3{margin-top:28px;font-size:19px}
article h2,article h3{scroll-margin-top:64px}
article a{color:#2f4fd0}
article code{font-family:${MONO};font-size:.9em;background:#f1f3f7;padding:1px 4px;border-radius:4px;overflow-wrap:anywhere}
article pre{background:#f6f8fb;border:1px solid #e1e5ee;border-radius:8px;padding:12px 14px;white-space:pre-wrap;overflow-wrap:anywhere;font-size:13.5px;line-height:1.5}
article pre code{background:none;padding:0;font-size:inherit}
article .table{overflow-x:auto}article table{border-collapse:collapse;font-size:14.5px;margin:12px 0}
article th,article td{border:1px solid #e1e5ee;padding:6px 10px;text-align:left;vertical-align:top}article th{background:#f6f8fb}
article blockquote{margin:12px 0;padding:4px 16px;border-left:4px solid #c9d3f5;color:#3d4559}
@media (max-width:760px){
  .page{display:block;padding:84px 16px 60px}
  .side{position:static;max-height:none;margin-bottom:16px}
  .side details{border:1px solid #e1e5ee;border-radius:8px;padding:6px 10px}
  .side details summary{display:list-item;cursor:pointer;font-weight:600}
  article h1{font-size:26px}
}
`;

/** One guide's page: the bar, the sidebar (every guide, this one's sections, the references), the text. */
export function renderGuidePage(guide: GuideText, guides: GuideText[]): string {
  const own = guideUrl(guide.slug);
  const sections = sectionsOf(guide.markdown).filter((s) => s.depth === 2);
  const guideLinks = guides
    .map((g) => {
      const url = guideUrl(g.slug);
      const inner =
        g === guide && sections.length
          ? `<ul>${sections.map((s) => `<li><a href="#${escapeHtml(s.id)}">${escapeHtml(s.title)}</a></li>`).join('')}</ul>`
          : '';
      return `<li><a href="${url}"${g === guide ? ' aria-current="page"' : ''}>${escapeHtml(g.title)}</a>${inner}</li>`;
    })
    .join('');
  const references = SITE_LINKS.filter(([, , href]) => !href.startsWith('/docs/guides/') && href !== '/admin')
    .map(([label, , href]) => `<li><a href="${href}">${escapeHtml(label)} reference</a></li>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(guide.title)} · Merx docs</title>
<link rel="icon" href="data:,">
<style>${SITE_CSS}${PAGE_CSS}</style>
</head>
<body>
${siteBar(own)}
<div class="page">
<aside class="side"><details open><summary>Guides and reference</summary>
<h2>Guides</h2><ul>${guideLinks}</ul>
<h2>Reference</h2><ul>${references}</ul>
</details></aside>
<article>
<h1>${escapeHtml(guide.title)}</h1>
${render(guide.markdown)}
</article>
</div>
<script src="${SITE_SCRIPT_URL}"></script>
</body>
</html>`;
}

/** The guide's sections as search entries (guides rank above reference entries). */
export function guideEntries(guide: GuideText): SearchEntry[] {
  return sectionsOf(guide.markdown).map((s) => ({
    title: s.title || guide.title,
    where: s.title ? `Guide · ${guide.title}` : 'Guide',
    url: guideUrl(guide.slug) + (s.id ? `#${s.id}` : ''),
    text: plain(s.text).replace(/\s+/g, ' ').slice(0, 1500),
    rank: s.title ? 1 : 0,
  }));
}
