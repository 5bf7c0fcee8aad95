// Issue 27: the start banner prints the operator token only when the service
// generated it; a token given in ADMIN_TOKEN is never printed. Runs the real
// entry point (node src/main.ts) as a child process, as `npm start` does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(import.meta.dirname, '..');

/** Starts src/main.ts on embedded PGlite in memory and returns its stdout once the banner is out. */
function banner(env: Record<string, string>): Promise<string> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('NODE_TEST')) base[k] = v;
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: {
      ...base,
      DATABASE_URL: '',
      DATA_DIR: 'memory://',
      ENCRYPTION_KEYS: '',
      PORT: '0',
      HOST: '127.0.0.1',
      SEED_DEMO: '0',
      LOG_LEVEL: 'warn',
      WORKERS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no banner: ${stdout} ${stderr}`))), 120_000);
    child.stderr.on('data', (c) => (stderr += c));
    child.stdout.on('data', (c) => {
      stdout += c;
      if (/Operator token .*\n/.test(stdout)) {
        clearTimeout(timer);
        child.kill('SIGTERM');
        resolve(stdout);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!/Operator token/.test(stdout)) reject(new Error(`exited ${code} before the banner: ${stderr}`));
    });
  });
}

test('a token from ADMIN_TOKEN is never printed: the banner says where it comes from', async () => {
  const token = `op-token-${Math.random().toString(36).slice(2)}-0123456789`;
  const out = await banner({ ADMIN_TOKEN: token });
  assert.match(out, /Operator token\s+from ADMIN_TOKEN\n/);
  assert.ok(!out.includes(token), out);
});

test('a token the service generated is printed, once, on its line', async () => {
  const out = await banner({ ADMIN_TOKEN: '' });
  const line = out.split('\n').find((l) => l.includes('Operator token'))!;
  assert.match(line, /Operator token\s+merx_admin_[A-Za-z0-9_-]{43}\s+\(generated for this run\)/);
});
