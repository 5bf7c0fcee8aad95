// The service started the way `npm start` starts it (node src/main.ts, a
// fresh embedded database in a temporary DATA_DIR or the test's DATABASE_URL,
// the demo account seeded), on a free port, with what its banner printed:
// the base URL, the operator token and the demo key. `tty: true` runs it
// under a pseudo-terminal (util-linux `script`), as a developer's terminal.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './service-child.ts';
import { isolatedDatabase } from './webhooks.ts';

const ROOT = path.join(import.meta.dirname, '../..');
export const NPM_START_TOKEN = 'npm-start-operator-token-0123456789';

export interface StartedLikeNpmStart {
  base: string;
  token: string;
  key: string;
  accountId: string;
  dataDir: string;
  process: ChildProcess;
  /** Everything written to the terminal (stdout; under a pty also stderr) so far. */
  output(): string;
  stop(): Promise<void>;
}

/** `dataDir` and `databaseEnv` (a restart of the same data): used as they are, and left in place by stop(). */
export interface NpmStartOptions {
  tty?: boolean;
  dataDir?: string;
  /** The database's whole environment (DATABASE_URL and, through a pooler, DATABASE_DIRECT_URL and DATABASE_READ_URLS). */
  databaseEnv?: Record<string, string>;
}

export async function startLikeNpmStart(env: Record<string, string> = {}, options: NpmStartOptions = {}): Promise<StartedLikeNpmStart> {
  const port = await freePort();
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'merx-npm-start-'));
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('NODE_TEST') && !['LOG_LEVEL', 'LOG_FORMAT', 'ADMIN_TOKEN', 'REDIS_URL', 'PUBLIC_BASE_URL'].includes(k))
      childEnv[k] = v;
  }
  // On PostgreSQL a database of its own: every start issues a new demo key and revokes the last one, so two of
  // these services on one database would revoke each other's.
  const { DATABASE_URL: wanted, ...rest } = env;
  const database = options.databaseEnv
    ? { env: options.databaseEnv, drop: async () => {} }
    : (wanted ?? process.env.DATABASE_URL)
      ? await isolatedDatabase()
      : null;
  // The operator token is given, not read off the banner (whose token line may say it differently).
  Object.assign(childEnv, {
    PORT: String(port),
    DATA_DIR: dataDir,
    WORKERS: '1',
    ADMIN_TOKEN: NPM_START_TOKEN,
    DATABASE_URL: database?.env.DATABASE_URL ?? '',
    ...database?.env,
    ...rest,
  });
  const command = `${JSON.stringify(process.execPath)} src/main.ts`;
  const child = options.tty
    ? spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: { ...childEnv, TERM: 'dumb' }, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, ['src/main.ts'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const deadline = Date.now() + 180_000;
  while (!/Demo API key\s+\S+/.test(out) || !/\n\s*Try: /.test(out)) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}): ${err}${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`no banner within 180 s: ${err}${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const field = (name: string) => new RegExp(`${name}\\s+(\\S+)`).exec(out)![1];
  const base = /API\s+(\S+)\/api\/v1/.exec(out)![1];
  return {
    base,
    token: childEnv.ADMIN_TOKEN,
    key: field('Demo API key'),
    accountId: field('Demo account'),
    dataDir,
    process: child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        // Under `script` the service is a grandchild: end it through the terminal's interrupt.
        if (options.tty) child.stdin!.write('\x03');
        else child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}
