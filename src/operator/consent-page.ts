// EXTENSIONS 10: the consent page of /oauth/authorize, in the console's look
// (console/src/styles.css's colours), usable at 390 px. No script: the form
// posts exactly the fields §10 lists, so a script can consent as a person does.
import { SCOPES } from '../platform/contract/scopes.ts';

export interface ConsentView {
  /** The authorization request's own parameters, carried as hidden fields. */
  request: Record<string, string>;
  clientName: string;
  redirectHost: string;
  /** The scopes asked, offered checked. */
  asked: string[];
  error?: string;
  accountId?: string;
}

const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
:root{--bg:#f6f7f9;--panel:#fff;--ink:#1b2130;--muted:#5f6b7e;--line:#e2e6ec;--accent:#3b5bdb;--bad:#c92a2a;--bad-bg:#fdeaea;--radius:8px}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:560px;margin:0 auto;padding:24px 16px}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:var(--radius);padding:20px}
h1{font-size:20px;margin:0 0 4px}p.sub{color:var(--muted);margin:0 0 16px;overflow-wrap:anywhere}
fieldset{border:1px solid var(--line);border-radius:var(--radius);margin:0 0 16px;padding:12px}
legend{font-weight:600;padding:0 4px}
label.scope{display:flex;gap:8px;align-items:center;padding:4px 0;font-family:ui-monospace,monospace;font-size:14px}
label.choice{display:flex;gap:8px;align-items:center;padding:4px 0}
label.field{display:block;font-weight:600;margin:0 0 4px}
input[type=password],input[type=text]{width:100%;padding:10px;border:1px solid var(--line);border-radius:6px;font:inherit}
.hint{color:var(--muted);font-size:13px;margin:4px 0 12px}
.error{background:var(--bad-bg);color:var(--bad);border-radius:6px;padding:10px 12px;margin:0 0 16px}
.actions{display:flex;gap:12px;flex-wrap:wrap}
button{flex:1 1 140px;padding:12px;border-radius:6px;font:inherit;font-weight:600;cursor:pointer;border:1px solid var(--line);background:var(--panel);color:var(--ink)}
button.approve{background:var(--accent);border-color:var(--accent);color:#fff}
.brand{font-weight:700;color:var(--accent);margin:0 0 12px}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head><body><main><p class="brand">Merx</p>${body}</main></body></html>`;
}

export function consentPage(view: ConsentView): string {
  const hidden = Object.entries(view.request)
    .filter(([name]) => name !== 'scope')
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('');
  const scopes = view.asked
    .filter((s) => (SCOPES as readonly string[]).includes(s))
    .map((s) => `<label class="scope"><input type="checkbox" name="scope" value="${escape(s)}" checked> ${escape(s)}</label>`)
    .join('');
  return page(
    `Connect ${view.clientName} to Merx`,
    `<div class="panel">
<h1>${escape(view.clientName)} wants to use your Merx shop</h1>
<p class="sub">It will return to <strong>${escape(view.redirectHost)}</strong>.</p>
${view.error ? `<p class="error" role="alert">${escape(view.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">${hidden}
<fieldset><legend>Scopes to grant</legend>${scopes}
<p class="hint">Only the scopes your API key holds can be granted.</p></fieldset>
<fieldset><legend>Writes</legend>
<label class="choice"><input type="radio" name="approval" value="on" checked> Writes wait for my approval</label>
<label class="choice"><input type="radio" name="approval" value="off"> Writes run at once</label>
<p class="hint">Changes the app asks for appear in the console's approvals inbox; nothing changes until you approve.</p></fieldset>
<label class="field" for="credential">API key of the shop, or the operator token</label>
<input id="credential" type="password" name="credential" autocomplete="off" required>
<label class="field" for="account_id" style="margin-top:12px">Account id (with the operator token only)</label>
<input id="account_id" type="text" name="account_id" value="${escape(view.accountId ?? '')}" autocomplete="off">
<p class="hint">The key or token is checked now and never given to ${escape(view.clientName)}.</p>
<div class="actions"><button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></div>
</form></div>`,
  );
}

/** An error page that redirects nowhere (unknown client, unregistered redirect URI). */
export function errorPage(message: string): string {
  return page(
    'Cannot connect to Merx',
    `<div class="panel"><h1>This app cannot connect</h1><p class="error" role="alert">${escape(message)}</p>
<p class="sub">Nothing was shared. Ask the app's maker to register its redirect address, or go back and try again.</p></div>`,
  );
}
