// canonicalJson: the form ETags and idempotency fingerprints hash. Keys sorted
// at every level (as strings, by UTF-16 code units), numbers as JavaScript
// writes them, strings escaped exactly as JSON.stringify escapes them, and
// any depth JSON.parse accepts, past the recursion limit too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../src/platform/contract/canonical-json.ts';

test('keys are sorted at every level, inside arrays too', () => {
  const value = { b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } };
  assert.equal(canonicalJson(value), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
});

test('integer-like keys sort as strings, not as numbers', () => {
  assert.equal(canonicalJson(JSON.parse('{"a":3,"2":2,"10":1}')), '{"10":1,"2":2,"a":3}');
});

test('numbers as JSON.parse reads them and JavaScript writes them', () => {
  assert.equal(canonicalJson(JSON.parse('[3.0, 12.50, 1e21, -0, 0.1, 1E-7, 9007199254740993]')), '[3,12.5,1e+21,0,0.1,1e-7,9007199254740992]');
  assert.equal(canonicalJson([NaN, Infinity]), '[null,null]');
});

test('strings are escaped as JSON.stringify escapes them', () => {
  const strings = [
    'plain',
    'quote " inside',
    'back\\slash',
    'line\nbreak\ttab\r',
    '\u0001\u001f',
    'lone \ud800 surrogate',
    'pair 😀',
    'é ü ß',
    '\u2028\u2029',
    '',
  ];
  for (const s of strings) {
    assert.equal(canonicalJson(s), JSON.stringify(s), s);
    assert.equal(canonicalJson({ [s]: s }), `{${JSON.stringify(s)}:${JSON.stringify(s)}}`, s);
  }
});

test('undefined members are left out; undefined in an array is null', () => {
  assert.equal(canonicalJson({ b: undefined, a: 1, c: undefined }), '{"a":1}');
  assert.equal(canonicalJson({ b: undefined }), '{}');
  assert.equal(canonicalJson([undefined, 1]), '[null,1]');
  assert.equal(canonicalJson(undefined), 'null');
  assert.equal(canonicalJson([true, false, null, {}, []]), '[true,false,null,{},[]]');
});

test('any depth: the same text below and past the recursion limit', () => {
  for (const depth of [1, 150, 199, 200, 201, 250, 10_000]) {
    let value: unknown = { y: 'end', x: [1] };
    let expected = '{"x":[1],"y":"end"}';
    for (let i = 0; i < depth; i++) {
      value = i % 2 ? [value, null] : { z: 0, a: value };
      expected = i % 2 ? `[${expected},null]` : `{"a":${expected},"z":0}`;
    }
    assert.equal(canonicalJson(value), expected, `depth ${depth}`);
  }
});

test('the same meaning gives the same text, whatever the key order and spacing', () => {
  const a = JSON.parse('{"id": "o1", "lines": [{"sku": "A", "qty": 2.0}], "total": 10.50, "note": null}');
  const b = JSON.parse('{"total":10.5,"note":null,"lines":[{"qty":2,"sku":"A"}],"id":"o1"}');
  assert.equal(canonicalJson(a), canonicalJson(b));
  assert.notEqual(canonicalJson(a), canonicalJson({ ...b, total: 10.51 }));
});
