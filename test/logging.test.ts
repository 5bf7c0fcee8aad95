// Issue 28: `npm start` in a terminal keeps its banner (operator token, demo
// key) on screen: quiet, one-line logs in a terminal, pino JSON elsewhere or
// with LOG_FORMAT=json, LOG_LEVEL winning when set, and the banner last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../src/config.ts';
import { decideLogging, prettyLine } from '../src/platform/edge/logger.ts';
import { startLikeNpmStart } from './helpers/npm-start.ts';

const dbEnv = (): Record<string, string> => (process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {});

test('the decision: a terminal gets pretty at warn, anything else JSON at info; LOG_FORMAT and LOG_LEVEL win when set', () => {
  const config = (env: Record<string, string>) => loadConfig(env);
  assert.deepEqual(decideLogging(config({}), true), { format: 'pretty', level: 'warn' });
  assert.deepEqual(decideLogging(config({}), false), { format: 'json', level: 'info' });
  assert.deepEqual(decideLogging(config({ LOG_FORMAT: 'json' }), true), { format: 'json', level: 'info' });
  assert.deepEqual(decideLogging(config({ LOG_FORMAT: 'pretty' }), false), { format: 'pretty', level: 'warn' });
  assert.deepEqual(decideLogging(config({ LOG_LEVEL: 'info' }), true), { format: 'pretty', level: 'info' });
  assert.deepEqual(decideLogging(config({ LOG_LEVEL: 'error', LOG_FORMAT: 'json' }), true), { format: 'json', level: 'error' });
  assert.deepEqual(decideLogging(config({ LOG_LEVEL: 'silent' }), false), { format: 'json', level: 'silent' });
});

test('LOG_FORMAT accepts json and pretty (empty: decided by the terminal); anything else stops the start naming the variable', () => {
  assert.equal(loadConfig({ LOG_FORMAT: 'json' }).logFormat, 'json');
  assert.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
  assert.equal(loadConfig({ LOG_FORMAT: '' }).logFormat, null);
  assert.equal(loadConfig({}).logLevel, null);
  for (const bad of ['JSON', 'text', 'yes']) {
    assert.throws(
      () => loadConfig({ LOG_FORMAT: bad }),
      (err: Error) => err instanceof ConfigError && /LOG_FORMAT must be one of json, pretty/.test(err.message),
    );
  }
  assert.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), ConfigError);
});

test('the one-line form: time, level, message, then the fields; an error shows its message, never its stack', () => {
  const line = prettyLine(
    JSON.stringify({
      level: 40,
      time: Date.UTC(2026, 0, 2, 3, 4, 5),
      pid: 1,
      hostname: 'h',
      msg: 'redis is unreachable',
      url: 'redis://x',
      err: { message: 'connect ECONNREFUSED', stack: 'Error\n    at x' },
    }),
  );
  assert.equal(line, '03:04:05 WARN  redis is unreachable url=redis://x err="connect ECONNREFUSED"');
  assert.doesNotMatch(prettyLine(JSON.stringify({ level: 50, time: 0, msg: 'two\nlines' })), /\n/);
});

test('not a terminal (a pipe): pino JSON lines at info, and the banner is the last thing written', async () => {
  const svc = await startLikeNpmStart(dbEnv());
  try {
    const out = svc.output();
    const bannerAt = out.indexOf('Merx is running');
    assert.ok(bannerAt >= 0, out);
    const before = out
      .slice(0, bannerAt)
      .split('\n')
      .filter((l) => l.trim());
    assert.ok(before.length > 0, 'start-up logged something at info');
    for (const line of before) assert.doesNotThrow(() => JSON.parse(line), `a JSON log line: ${line}`);
    assert.ok(
      before.some((l) => JSON.parse(l).level === 30),
      'info lines are written',
    );
    assert.doesNotMatch(out.slice(bannerAt), /^\{/m, 'nothing was logged after the banner');
    assert.match(out, /Demo API key\s+merx_/);
  } finally {
    await svc.stop();
  }
});

test('a terminal (a pseudo-terminal): no JSON and no info lines, the banner with the token and key is what the screen ends with', async () => {
  const svc = await startLikeNpmStart(dbEnv(), { tty: true });
  try {
    // Requests of every kind, as a developer trying things: none of them is logged.
    for (let i = 0; i < 20; i++) await fetch(`${svc.base}/api/v1/orders?limit=1`, { headers: { authorization: `Bearer ${svc.key}` } });
    await fetch(`${svc.base}/api/v1/orders`, { headers: { authorization: 'Bearer merx_wrong' } });
    await new Promise((r) => setTimeout(r, 300));
    const lines = svc
      .output()
      .replace(/\r/g, '')
      .split('\n')
      .filter((l) => l.trim());
    assert.ok(
      !lines.some((l) => l.startsWith('{')),
      `no JSON in a terminal: ${lines
        .filter((l) => l.startsWith('{'))
        .slice(0, 3)
        .join('\n')}`,
    );
    // Above the banner only warnings may stand (on PostgreSQL without ENCRYPTION_KEYS, the one about the key kept in the database).
    const bannerAt = lines.findIndex((l) => /Merx is running/.test(l));
    assert.ok(bannerAt >= 0, lines.slice(0, 5).join('\n'));
    for (const line of lines.slice(0, bannerAt)) assert.match(line, /^\d\d:\d\d:\d\d WARN /, `only warnings above the banner: ${line}`);
    assert.match(lines.at(-1)!, /Try: curl/);
  } finally {
    await svc.stop();
  }
});
