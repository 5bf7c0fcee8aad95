// A readable, dependency-free HTML page rendered from an OpenAPI document
// (served at /docs and /admin/docs). No scripts, no CDN: works offline.
type Doc = ReturnType<typeof import('./openapi.ts').buildOpenApiDocument>;

const escape = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function schemaSummary(schema: any): string {
  if (!schema) return '';
  if (schema.$ref) return schema.$ref.split('/').pop();
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (schema.anyOf) return schema.anyOf.map(schemaSummary).join(' or ');
  const type = [schema.type].flat().filter(Boolean).join(' or ');
  if (schema.type === 'array' || (Array.isArray(schema.type) && schema.type.includes('array'))) return `${type} of ${schemaSummary(schema.items)}`;
  return schema.format ? `${type} (${schema.format})` : type || 'any';
}

function fieldsTable(rows: Array<{ name: string; where: string; type: string; required: boolean; description?: string }>): string {
  if (!rows.length) return '';
  return `<table><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>notes</th></tr>${rows
    .map((r) => `<tr><td><code>${escape(r.name)}</code></td><td>${r.where}</td><td>${escape(r.type)}</td><td>${r.required ? 'yes' : ''}</td><td>${escape(r.description)}</td></tr>`)
    .join('')}</table>`;
}

export function renderDocsPage(doc: Doc, jsonUrl: string): string {
  const sections: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods as Record<string, any>)) {
      const rows = (op.parameters ?? []).map((p: any) => ({ name: p.name, where: p.in, type: schemaSummary(p.schema), required: p.required, description: p.description }));
      const body = op.requestBody?.content['application/json'].schema;
      for (const [name, s] of Object.entries<any>(body?.properties ?? {})) {
        rows.push({ name, where: 'body', type: schemaSummary(s), required: (body.required ?? []).includes(name), description: s.description });
      }
      const success = Object.entries<any>(op.responses).filter(([code]) => code.startsWith('2'));
      sections.push(`<section id="${escape(op.operationId)}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
<p><b>${escape(op.summary)}</b>${op['x-required-scope'] ? ` &middot; scope <code>${escape(op['x-required-scope'])}</code>` : ''} &middot; MCP tool / operationId <code>${escape(op.operationId)}</code></p>
<p class="d">${escape(op.description)}</p>${fieldsTable(rows)}
<p>${success.map(([code, r]) => `<code>${code}</code> ${escape(schemaSummary(r.content?.['application/json']?.schema))}`).join(' &middot; ')}</p></section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(doc.info.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#1d2330}
code{background:#f2f4f7;padding:0 .3em;border-radius:3px}table{border-collapse:collapse;width:100%;margin:.5em 0}
td,th{border:1px solid #dde1e6;padding:.25em .5em;text-align:left;font-size:14px}section{border-top:1px solid #dde1e6;padding:.5em 0}
.m{font:bold 13px monospace;padding:.1em .4em;border-radius:3px;color:#fff;background:#4a5568}.get{background:#2f855a}.post{background:#2b6cb0}
.patch{background:#b7791f}.delete{background:#c53030}.put{background:#6b46c1}.d,.intro{white-space:pre-wrap}</style></head><body>
<h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1>
<p>Machine-readable contract: <a href="${escape(jsonUrl)}">${escape(jsonUrl)}</a> (OpenAPI 3.1).</p>
<div class="intro">${escape(doc.info.description)}</div>
<h2>Operations</h2>${sections.join('\n')}</body></html>`;
}
