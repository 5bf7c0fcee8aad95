// pgbench (-M prepared) running the SQL the service sends, recorded from the
// service's own query functions: the ceiling the API is measured against.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Sql } from '../src/platform/db/db.ts';
import { childCpuMs } from './cpu.ts';
import { EventReactions } from '../src/platform/db/outbox.ts';
import { DocumentCache } from '../src/platform/read-path/document-cache.ts';
import { Keyring } from '../src/platform/edge/secret-box.ts';

export const PGBENCH = process.env.BENCH_PGBENCH || '/usr/bin/pgbench';

export interface Statement {
  text: string;
  params: unknown[];
}

/** Runs `call` against a Sql that answers nothing and keeps what was sent; the last statement is the read. */
export async function recordSql(call: (sql: Sql) => Promise<unknown>): Promise<Statement> {
  const seen: Statement[] = [];
  const sql: Sql = {
    query: async (text: string, params: unknown[] = []) => {
      seen.push({ text, params });
      return { rows: [], rowCount: 0 };
    },
    exec: async () => {},
    afterCommit: (task) => task(),
    reactions: new EventReactions(),
    documentCache: new DocumentCache(),
    keyring: new Keyring(),
  };
  await call(sql).catch(() => {}); // a get of "no row" throws not_found after sending its query
  if (!seen.length) throw new Error('the call sent no SQL');
  return seen[seen.length - 1];
}

/**
 * One pgbench script per statement: $n becomes :pn, defined with -D, so
 * -M prepared binds them as parameters as the service does. Parameters that
 * differ between scripts (order ids) are written into each script's
 * variables through \set-free literals: each script file gets its own copy.
 */
export function pgbenchScripts(statements: Statement[], dir: string): { files: string[]; defines: string[] } {
  const shared = statements[0].params;
  const defines: string[] = [];
  const files = statements.map((statement, i) => {
    let text = statement.text.replace(/\$(\d+)/g, (_m, n: string) => {
      const value = statement.params[Number(n) - 1];
      if (value === null || value === undefined) return 'NULL';
      if (valueText(value) === valueText(shared[Number(n) - 1])) return `:p${n}`;
      return `'${valueText(value).replace(/'/g, "''")}'`;
    });
    text = text.replace(/\s+/g, ' ').trim();
    const file = path.join(dir, `script-${i}.sql`);
    fs.writeFileSync(file, `${text};\n`);
    return file;
  });
  shared.forEach((value, i) => value !== null && value !== undefined && defines.push('-D', `p${i + 1}=${valueText(value)}`));
  return { files, defines };
}

/** A parameter as PostgreSQL reads its text: an array as an array literal (the held documents' tags: none, recorded cold). */
function valueText(value: unknown): string {
  return Array.isArray(value) ? `{${value.map((v) => JSON.stringify(String(v))).join(',')}}` : String(value);
}

/** pgbench's environment, with PGOPTIONS setting plan_cache_mode for its sessions when asked. */
function sessionEnv(planCacheMode: string | undefined): NodeJS.ProcessEnv {
  if (!planCacheMode) return process.env;
  return { ...process.env, PGOPTIONS: `${process.env.PGOPTIONS ?? ''} -c plan_cache_mode=${planCacheMode}`.trim() };
}

export interface PgbenchResult {
  tps: number;
  p50Ms: number;
  p99Ms: number;
  transactions: number;
  /** pgbench's own CPU per transaction (user + system): the client shares the machine's cores with the server. */
  clientCpuMs?: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

/**
 * `planCacheMode`: PostgreSQL's plan_cache_mode for pgbench's sessions, when the
 * statements as pgbench runs them (literals in place of a parameter) would not
 * plan as the service's warm connections do.
 */
export async function runPgbench(
  databaseUrl: string,
  statements: Statement[],
  clients: number,
  seconds: number,
  options: { planCacheMode?: 'force_generic_plan' } = {},
): Promise<PgbenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-pgbench-'));
  try {
    const { files, defines } = pgbenchScripts(statements, dir);
    const args = [
      '-n',
      '-M',
      'prepared',
      '-c',
      String(clients),
      '-j',
      String(Math.min(clients, os.availableParallelism())),
      '-T',
      String(seconds),
      '-l',
      `--log-prefix=${path.join(dir, 'log')}`,
      ...defines,
      ...files.flatMap((f) => ['-f', f]),
      databaseUrl,
    ];
    // Through bash, whose `times` then prints pgbench's CPU.
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(
        'bash',
        ['-c', '"$0" "$@" && times >&2', PGBENCH, ...args],
        { maxBuffer: 16 * 1024 * 1024, env: sessionEnv(options.planCacheMode) },
        (err, out, errOut) => (err ? reject(new Error(`pgbench: ${err.message}\n${errOut}`)) : resolve({ stdout: out, stderr: errOut })),
      ),
    );
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1] ?? /tps = ([\d.]+)/.exec(stdout)?.[1]);
    const latencies: number[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.startsWith('log'))) {
      for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
        const fields = line.split(' ');
        if (fields.length >= 3) latencies.push(Number(fields[2]) / 1000);
      }
    }
    const sorted = Float64Array.from(latencies).sort();
    const cpuMs = childCpuMs(stderr);
    return {
      tps,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      transactions: sorted.length,
      clientCpuMs: cpuMs === null ? undefined : cpuMs / sorted.length,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
