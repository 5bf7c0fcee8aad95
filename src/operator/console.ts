// The operator console at /admin: a small page over the operator API
// (provision an account, issue a key, seed data, read sent messages).
// The token stays in the browser's sessionStorage; the page has no secrets.
import type { FastifyInstance } from 'fastify';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Merx operator console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:900px;margin:2em auto;padding:0 1em;color:#1d2330}
fieldset{border:1px solid #dde1e6;border-radius:6px;margin:1em 0}input,select{font:inherit;margin:.2em}
pre{background:#f2f4f7;padding:.8em;border-radius:6px;overflow:auto;max-height:24em}button{font:inherit}</style></head><body>
<h1>Merx operator console</h1>
<p>Drives the <a href="/admin/docs">operator API</a>. Public API docs: <a href="/docs">/docs</a>.</p>
<fieldset><legend>Operator token</legend><input id="token" type="password" size="50" placeholder="ADMIN_TOKEN printed at start">
<button onclick="sessionStorage.token=document.getElementById('token').value">Use</button></fieldset>
<fieldset><legend>New account</legend><input id="name" placeholder="Shop name"><input id="email" placeholder="owner@example.com">
<select id="plan"><option>pro</option><option>business</option><option>free</option></select>
<button onclick="call('POST','/accounts',{name:v('name'),email:v('email'),plan:v('plan')}).then(r=>{if(r.data)document.getElementById('account').value=r.data.id})">Create</button></fieldset>
<fieldset><legend>Account</legend><input id="account" size="40" placeholder="account id">
<button onclick="call('GET','/accounts/'+v('account'))">Show</button>
<select id="preset"><option>fulfilment</option><option>read_only</option><option>bridge</option></select>
<button onclick="call('POST','/accounts/'+v('account')+'/keys',{name:'console',preset:v('preset')})">Issue key</button>
<button onclick="call('GET','/accounts/'+v('account')+'/keys')">Keys</button>
<input id="orders" type="number" value="1000" style="width:7em"> orders
<button onclick="call('POST','/accounts/'+v('account')+'/seed',{orders:+v('orders'),products:50})">Seed</button>
<button onclick="call('GET','/accounts/'+v('account')+'/messages')">Messages</button></fieldset>
<pre id="out">Answers appear here.</pre>
<script>
const v = (id) => document.getElementById(id).value;
async function call(method, path, body) {
  const res = await fetch('/admin/api' + path, { method, headers: { authorization: 'Bearer ' + (sessionStorage.token || ''),
    ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json = await res.json().catch(() => ({}));
  document.getElementById('out').textContent = res.status + '\\n' + JSON.stringify(json, null, 2);
  return json;
}
</script></body></html>`;

export function registerConsole(app: FastifyInstance): void {
  app.get('/admin', async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
}
