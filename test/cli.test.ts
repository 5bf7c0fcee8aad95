// `npx merx` from a shell (OPERATOR_API Running). On embedded PGlite the
// database has one writer: while the server holds DATA_DIR, the CLI must say
// why it cannot run and what to use instead, not fail with a bare lock error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDb } from '../src/platform/db/open-db.ts';
import { startLikeNpmStart } from './helpers/npm-start.ts';

const BIN = path.join(import.meta.dirname, '../bin/merx.js');

function merx(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const { DATABASE_URL: _ignored, ...inherited } = process.env;
    execFile(process.execPath, [BIN, ...args], { env: { ...inherited, LOG_LEVEL: 'silent', ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('keys issue while another process holds the PGlite directory explains the single writer and points at the console and operator API', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-cli-'));
  // This test process plays the running server: it holds DATA_DIR.
  const server = await openDb({ databaseUrl: null, dataDir });
  try {
    const run = await merx(['keys', 'issue', '--account', '00000000-0000-4000-8000-000000000001', '--preset', 'fulfilment'], {
      DATA_DIR: dataDir,
      PUBLIC_BASE_URL: 'http://localhost:3999',
    });
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, new RegExp(`in use by process ${process.pid}`));
    assert.match(run.stderr, /single writer/);
    assert.match(run.stderr, /http:\/\/localhost:3999\/admin /, 'the console');
    assert.match(run.stderr, /POST http:\/\/localhost:3999\/admin\/api\/accounts\/<account id>\/keys/, 'the operator API');
    assert.match(run.stderr, /DATABASE_URL/);
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('with the directory free, the same command works: accounts create then keys issue print JSON', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-cli-'));
  try {
    const created = await merx(['accounts', 'create', '--name', 'CLI shop', '--email', 'cli@example.com'], { DATA_DIR: dataDir });
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout).data;
    const issued = await merx(['keys', 'issue', '--account', account.id, '--preset', 'read_only', '--name', 'ci'], { DATA_DIR: dataDir });
    assert.equal(issued.code, 0, issued.stderr);
    const out = JSON.parse(issued.stdout);
    assert.match(out.key, /^merx_[A-Za-z0-9]{40}$/);
    assert.equal(out.data.prefix, out.key.slice(0, 11));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

// Issue 28: the hint named http://localhost:3000 (this shell's PORT) while the server listened elsewhere.
test('the busy-directory hint names the URL the running server serves under, whatever PORT this shell has', async () => {
  const server = await startLikeNpmStart({ DATABASE_URL: '' });
  try {
    assert.doesNotMatch(server.base, /:3000$/);
    const run = await merx(['keys', 'issue', '--account', server.accountId, '--preset', 'fulfilment'], {
      DATA_DIR: server.dataDir,
      PORT: '',
      PUBLIC_BASE_URL: '',
    });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /single writer/);
    assert.ok(run.stderr.includes(`${server.base}/admin `), `the console at ${server.base}: ${run.stderr}`);
    assert.ok(run.stderr.includes(`POST ${server.base}/admin/api/accounts/`), run.stderr);
    assert.doesNotMatch(run.stderr, /localhost:3000/);
  } finally {
    await server.stop();
  }
});
