// How bench/read-path.ts writes its figures: the header of
// RESULTS-read-path.md (rewritten on each run: it explains the newest
// sections) and one section per run, appended.
import fs from 'node:fs';
import path from 'node:path';
import type { Side } from './read-path-http.ts';

export const RESULTS_FILE = path.join(import.meta.dirname, 'RESULTS-read-path.md');

const HOW_TO_READ = [
  'Written by `npm run bench:read-path` (bench/read-path.ts); each run appends its section. The API and pgbench share the',
  'machine (2 cores) with PostgreSQL, with autocannon, and with whatever else runs: the load average is printed with each',
  'run, and only the side-by-side ratios of one run compare. pgbench runs the SQL recorded from the measured checkout',
  "(main's: plain columns decoded by Node; this branch's: the view built as JSON), so the ratio's denominator is what that",
  'checkout asks of PostgreSQL. The order-by-id pgbench side has one script per id (the id written into the script, the',
  'account a bound parameter), picked at random, run with plan_cache_mode=force_generic_plan (where a section says so): the',
  'service binds the id to one prepared statement, whose warm connections settle on its generic plan (pgbench of that',
  'statement with both values bound: auto 17,961 tps, generic 18,186, custom 1,315), while fifty scripts of literal ids',
  'replan five times each per connection, most of an 8 s run at 50 connections: earlier sections measured that planning',
  '(pgbench 1,045-1,365/s, 11,529/s once it settled). From the section "prepared statements on their generic plans" on,',
  'the service runs every prepared statement on its generic plan (src/platform/db/db.ts preparedPool), and pgbench runs',
  'every statement so too. "page N vs page 1" is throughput, so 1.2x slower reads as >= 83%. From the section "service',
  'CPU per request" on, each API side also shows the service process\'s CPU per answered request (user + system, from',
  '/proc): what the service itself spends, steadier from run to run than the throughput of a machine it shares. From the',
  'section "latency floor" on, each section ends with pgbench of the list SQL alone at 2 to 50 clients: its best',
  'throughput bounds what any server of that page can do, and so the mean latency of 50 connections in a closed loop.',
  '',
  'From issue 29 on (sections whose first line says "yardstick: minimal SQL"), the API is divided by a yardstick that does',
  'not move with the code it measures: fixed SQL written in bench/read-path-yardsticks.ts, never recorded from the',
  'checkout, that returns what the page (or the order) shows as plain columns: the order columns the Order view shows and',
  "the latest shipment's six through the view's LEFT JOIN LATERAL, `WHERE account_id = $1 AND status <> 'archived'` newest",
  'first `LIMIT 51` (the list), or `AND o.id = <id>` (one script per id, as above), prepared, on generic plans. A before',
  'and an after are so divided by the same work, and "API vs minimal SQL" measures the whole service, its own SQL included.',
  "pgbench of the checkout's own SQL (recorded from its listOrders/getOrder, as before) is measured against the same",
  'yardstick: what a page, and an order, costs the database beyond the data itself (issue 29: >= 80% for the list). The',
  'list is also run at 8 connections on both sides; the latency table at the end of a section sets the p50 and p99 of the',
  'API beside those of pgbench of the minimal SQL at the same count (8 and 50). "PATCH after vs before" runs two services',
  'side by side, the checkout under test and BENCH_BEFORE_DIR, each on its own fresh database seeded the same way',
  '(100k orders, shipments, keys), alternating like every other pair: each request takes the next of up to 4,000 orders',
  'round-robin and flips it between confirmed and processing (SPEC allows any status change; these two move no stock and',
  'notify no one), a real change with its order.status_changed event each time, counted in the events table after every',
  'run. In a run of main against itself (BENCH_SERVICE_DIR = BENCH_BEFORE_DIR) that pair is a null comparison: its',
  'distance from 100% is the noise. The latency floor now runs the minimal list SQL.',
  '',
  'From the section "issue 29 on a new machine" on, wrk sends the API\'s reads and MCP calls (a C client, as pgbench is on',
  "the other side; autocannon, in JavaScript, spent about twice wrk's CPU per list request on the cores the service",
  "shares), and each side shows its client's CPU per request (wrk's and pgbench's from bash `times`, autocannon's from this",
  'process). PATCH stays on autocannon, each request depending on the answers before it. From "held documents" on, the',
  'service holds the documents it answered a read with and PostgreSQL sends only the changed ones (bench/read-path.md);',
  'pgbench of "the service\'s SQL" runs that statement with nothing held, the cold read. The pair "fixed bytes, no work"',
  "serves the REST page's and the MCP answer's bytes, as the service sent them, from a server that does nothing else",
  "(fixed-answer-server.ts): what the MCP answer's size alone costs on this machine, the floor under MCP vs REST.",
].join('\n');

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const f = (n: number) => n.toFixed(n < 10 ? 2 : 0);

/** One side's medians over the rounds: throughput, p50, p99 and, for the API, the service's CPU per request. */
export function sideText(label: string, sides: Side[]): string {
  const cpu = sides.every((s) => s.serviceCpuMs !== undefined)
    ? `, service CPU ${median(sides.map((s) => s.serviceCpuMs!)).toFixed(3)} ms/request`
    : '';
  const client = sides.every((s) => s.clientCpuMs !== undefined) ? `, client CPU ${median(sides.map((s) => s.clientCpuMs!)).toFixed(3)} ms` : '';
  return `${label} ${f(median(sides.map((s) => s.reqPerSec)))}/s, p50 ${f(median(sides.map((s) => s.p50Ms)))} ms, p99 ${f(median(sides.map((s) => s.p99Ms)))} ms${cpu}${client}`;
}

/** A table row: both sides, the median of the per-round ratios (each round's in brackets), the target. */
export function pairRow(name: string, target: string, a: { label: string; sides: Side[] }, b: { label: string; sides: Side[] }): string {
  const ratios = a.sides.map((side, r) => side.reqPerSec / b.sides[r].reqPerSec);
  const pct = (r: number) => `${(r * 100).toFixed(0)}%`;
  return `| ${name} | ${sideText(a.label, a.sides)} | ${sideText(b.label, b.sides)} | **${pct(median(ratios))}** (${ratios.map(pct).join(', ')}) | ${target} |`;
}

/** The latency table: at each connection count, the API list beside pgbench of the minimal SQL (medians of the rounds). */
export function latencyTable(rows: Array<{ connections: number; api: Side[]; pgbench: Side[] }>): string[] {
  const m = (sides: Side[], key: 'reqPerSec' | 'p50Ms' | 'p99Ms') => f(median(sides.map((s) => s[key])));
  return [
    '| connections | API list: p50 / p99 (throughput) | pgbench minimal list SQL: p50 / p99 (throughput) |',
    '|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.connections} | ${m(r.api, 'p50Ms')} / ${m(r.api, 'p99Ms')} ms (${m(r.api, 'reqPerSec')}/s) | ${m(r.pgbench, 'p50Ms')} / ${m(r.pgbench, 'p99Ms')} ms (${m(r.pgbench, 'reqPerSec')}/s) |`,
    ),
  ];
}

/** Rewrites the header and appends `section` after the sections already there. */
export function appendSection(section: string): void {
  const header = `# Read path benchmark (issues 12 and 29)\n\n${HOW_TO_READ}\n\n`;
  const existing = fs.existsSync(RESULTS_FILE) ? fs.readFileSync(RESULTS_FILE, 'utf8') : '';
  const sections = existing.includes('\n## ') ? existing.slice(existing.indexOf('\n## ') + 1).trimEnd() : '';
  fs.writeFileSync(RESULTS_FILE, `${header}${sections ? `${sections}\n\n` : ''}${section}`);
}
