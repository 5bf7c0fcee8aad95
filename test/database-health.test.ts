// The database health monitor's judgement (issue 27), on probes that fail the way node-postgres fails: a
// connection refused, and one cut after it got in. The real database's faults are database-faults*.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseHealth, probeCut } from '../src/platform/db/health.ts';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const terminated = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

/** A monitor whose probes answer from `outcomes` in turn (an Error is thrown), with the lines it logs. */
function monitor(outcomes: Array<Error | null>) {
  const lines: string[] = [];
  let probes = 0;
  const health = new DatabaseHealth(async () => {
    const outcome = outcomes[probes++] ?? null;
    if (outcome) throw outcome;
  });
  health.setLog({ warn: (_f, message) => lines.push(message), info: (_f, message) => lines.push(message) });
  return { health, lines, probes: () => probes };
}

/** The monitor's verdict a moment after a failed query, with its probes answering from `outcomes`. */
async function verdict(outcomes: Array<Error | null>) {
  const { health, lines, probes } = monitor(outcomes);
  health.noticeFailure(terminated());
  await new Promise((r) => setTimeout(r, 20));
  health.close();
  return { probes: probes(), down: health.isDown, lines };
}

const DOWN_LINE = 'the database is unreachable: answering 503 until it is back';

for (const [name, outcomes, expected] of [
  [
    'a probe whose connection is cut after it got in asks again at once: the database is up when the second answers',
    [probeCut(terminated()) as Error, null],
    { probes: 2, down: false, lines: [] },
  ],
  ['a probe ended by the server while it connected (57P01) asks again too', [terminated(), null], { probes: 2, down: false, lines: [] }],
  [
    'a cut probe whose second try is refused: the database is down, said once',
    [probeCut(terminated()) as Error, refused()],
    { probes: 2, down: true, lines: [DOWN_LINE] },
  ],
] as const) {
  test(name, async () => {
    assert.deepEqual(await verdict([...outcomes]), expected);
  });
}

test('a refused probe is not asked again: down at once; a later probe that gets through ends it, said once', async () => {
  const { health, lines, probes } = monitor([refused(), null]);
  health.noticeFailure(refused());
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(probes(), 1);
  assert.equal(health.isDown, true);
  assert.equal(health.state().database, 'unavailable');
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(health.isDown, false);
  assert.deepEqual(lines, [DOWN_LINE, 'the database is reachable again']);
  health.close();
});

test('probeCut marks only connection errors; a statement error is left as it was', () => {
  assert.equal((probeCut(new Error('Connection terminated unexpectedly')) as { probeCut?: boolean }).probeCut, true);
  assert.equal((probeCut(terminated()) as { probeCut?: boolean }).probeCut, true);
  const syntax = Object.assign(new Error('syntax error'), { code: '42601' });
  assert.equal((probeCut(syntax) as { probeCut?: boolean }).probeCut, undefined);
});
