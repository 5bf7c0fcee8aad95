// The COPY export's statement takes its values as literals (src/platform/db/sql-literals.ts): written as pg would send
// each parameter, quoted so that no value is read as SQL, and only where a parameter stands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sqlWithLiterals } from '../src/platform/db/sql-literals.ts';

test('values become quoted literals; $n inside a quoted literal and $1 against $10 are told apart; a missing value throws', () => {
  const values = ["O'Brien", ['a', 'b"c'], null, 4, 5, 6, 7, 8, 9, 'ten'];
  assert.equal(
    sqlWithLiterals("SELECT 1 WHERE a = $1 AND b = ANY ($2::text[]) AND d = $3 AND e = '$1 it''s' AND f = $10", values),
    `SELECT 1 WHERE a = 'O''Brien' AND b = ANY ( E'{"a","b\\\\"c"}'::text[]) AND d = NULL AND e = '$1 it''s' AND f = 'ten'`,
  );
  // A date as pg sends it: the instant with its offset.
  const at = new Date('2026-01-02T03:04:05.006Z');
  const literal = /^SELECT '(.+)'$/.exec(sqlWithLiterals('SELECT $1', [at]))![1];
  assert.equal(new Date(literal).getTime(), at.getTime());
  assert.throws(() => sqlWithLiterals('SELECT $2', [1]), /\$2 has no value/);
  // A backslash makes an E'' literal, which reads it as one backslash.
  assert.equal(sqlWithLiterals('SELECT $1', ['a\\b']), "SELECT  E'a\\\\b'");
});
