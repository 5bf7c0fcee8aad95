// The real service as a child process (node src/main.ts) on a database that
// outlives it, for tests that kill it with SIGKILL or run two instances side
// by side. It trusts the HTTPS receiver's CA and may deliver to 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, ENCRYPTION_KEYS } from './harness.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const START_TIMEOUT_MS = 120_000;

export interface ServiceChild {
  url: string;
  process: ChildProcess;
  stderr(): string;
  /** What it wrote on stdout: the start banner and its JSON log lines. */
  stdout(): string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `node src/main.ts` with `env` (the database's, plus overrides) and waits for GET /healthz. */
export async function startServiceChild(port: number, env: Record<string, string>, caFile: string): Promise<ServiceChild> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('NODE_TEST') && !k.startsWith('DATABASE_') && k !== 'DATA_DIR') childEnv[k] = v;
  }
  Object.assign(childEnv, {
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    ENCRYPTION_KEYS,
    SEED_DEMO: '0',
    WORKERS: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    NODE_EXTRA_CA_CERTS: caFile,
    LOG_LEVEL: 'error',
    DEPLOY_SHA: 'childtest00',
    ...env,
  });
  const child = spawn(process.execPath, ['src/main.ts'], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the service exited during start-up (${child.exitCode ?? child.signalCode}): ${stderr}`);
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start within ${START_TIMEOUT_MS / 1000} s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, process: child, stderr: () => stderr, stdout: () => stdout };
}

export async function killHard(child: ServiceChild): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
  child.process.kill('SIGKILL');
  await exited;
}

/** SIGTERM: the service closes gracefully (attempts in flight finish). */
export async function stopGracefully(child: ServiceChild): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
  child.process.kill('SIGTERM');
  await exited;
}
