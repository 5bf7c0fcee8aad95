// JsonText's bytes are what the transports send: pieces of JSON written one
// after another, and (MCP's content[0].text) a JSON's text as a JSON string,
// which must be byte for byte what JSON.stringify(text) gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonText, StoredText } from '../src/platform/read-path/json-text.ts';
import { etagOfText } from '../src/platform/contract/etag.ts';
import { AnswerBufferPool } from '../src/platform/read-path/answer-bytes.ts';

const buffers = new AnswerBufferPool();

/** What MCP sends for a tool result: the JSON quoted, then the JSON itself. */
const toolResult = (json: JsonText) =>
  JsonText.concat(['{"content":[{"type":"text","text":', JsonText.quoted(json), '}],"structuredContent":', json, ',"isError":false}']);

function assertQuotedLikeStringify(text: string) {
  const quoted = JsonText.quoted(new JsonText(text));
  const expected = JSON.stringify(text);
  assert.equal(quoted.text, expected);
  assert.deepEqual(quoted.bytes(buffers), Buffer.from(expected), `bytes of ${JSON.stringify(text.slice(0, 80))}`);
}

test('a quoted JSON text is escaped byte for byte as JSON.stringify escapes it', () => {
  const texts = [
    '{}',
    '[]',
    'null',
    '"a"',
    JSON.stringify({ name: 'Thing "one"', path: 'C:\\tmp\\x', note: 'line 1\nline 2\r\n\ttabbed\b\f\u0001\u001f\u007f' }),
    JSON.stringify({ city: 'Köln', han: '中文', emoji: '😀 👍🏽', separators: '\u2028\u2029', lone: '\ud800 and \udfff' }),
    // Whitespace between tokens (a `json` column keeps its input's): tab, newline and carriage return raw in the text.
    JSON.stringify({ a: [1, 2, { b: 'c' }], d: null }, null, '\t').replace(/\n/g, '\r\n'),
    JSON.stringify({ deep: { numbers: [0, -1.5, 1e21, 5e-324], empty: '' } }, null, 2),
  ];
  for (const text of texts) assertQuotedLikeStringify(text);
});

test('a quoted JSON text matches JSON.stringify over generated documents of every code unit', () => {
  let seed = 20261123;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const someString = () => {
    const length = Math.floor(random() * 40);
    let s = '';
    for (let i = 0; i < length; i++) {
      const pick = random();
      // ASCII (with the escaped characters often), control characters, two-byte, three-byte, surrogates alone and in pairs.
      s += String.fromCharCode(
        pick < 0.5
          ? 0x20 + Math.floor(random() * 0x5f)
          : pick < 0.6
            ? [0x22, 0x5c][Math.floor(random() * 2)]
            : pick < 0.7
              ? Math.floor(random() * 0x20)
              : pick < 0.8
                ? 0x80 + Math.floor(random() * 0x780)
                : pick < 0.95
                  ? 0x800 + Math.floor(random() * 0xf7ff)
                  : 0xd800 + Math.floor(random() * 0x800),
      );
    }
    return s;
  };
  for (let i = 0; i < 2_000; i++) {
    const doc = { key: someString(), list: [someString(), random() * 1e6, { [someString()]: someString() }] };
    assertQuotedLikeStringify(JSON.stringify(doc, null, i % 3 === 0 ? '\t' : undefined));
  }
});

test('text that is not JSON (a raw control character) still comes out as JSON.stringify writes it', () => {
  assertQuotedLikeStringify('{"a":"\b\u0000"}');
  assertQuotedLikeStringify('\f');
});

test('a tool result writes the same JSON twice, once quoted, among other pieces', () => {
  const page = new JsonText(JSON.stringify({ data: [{ id: 'o1', note: 'say "hi" \\ é 😀' }], has_more: false, next_cursor: null }));
  const result = toolResult(JsonText.concat([page]));
  const expected = `{"content":[{"type":"text","text":${JSON.stringify(page.text)}}],"structuredContent":${page.text},"isError":false}`;
  assert.equal(result.text, expected);
  assert.deepEqual(result.bytes(buffers), Buffer.from(expected));
  const parsed = JSON.parse(result.bytes(buffers).toString('utf8'));
  assert.deepEqual(JSON.parse(parsed.content[0].text), parsed.structuredContent);
  // A quoted piece among pieces of several strings, and a quoted piece of a quoted piece.
  const pieces = JsonText.concat(['[', JsonText.quoted(JsonText.concat(['{"a":', page, '}'])), ',', JsonText.quoted(JsonText.quoted(page)), ']']);
  const nested = `[${JSON.stringify(`{"a":${page.text}}`)},${JSON.stringify(JSON.stringify(page.text))}]`;
  assert.equal(pieces.text, nested);
  assert.deepEqual(pieces.bytes(buffers), Buffer.from(nested));
});

test('stored views in a page are quoted as JSON.stringify quotes them, the first time and from their cached escaped form', () => {
  const views = [
    JSON.stringify({ name: 'Thing "one"', path: 'C:\\tmp\\x', city: 'Köln', emoji: '😀' }),
    JSON.stringify({ a: [1, 2, { b: 'c' }] }, null, '\t').replace(/\n/g, '\r\n'),
    JSON.stringify({ note: 'plain' }),
  ];
  // Tags as the database writes them: the text's hash, so a tag always names the same text.
  const stored = views.map((text) => new StoredText(text, etagOfText(text)));
  const page = () => new JsonText(['{"data":[', stored[0], ',', stored[1], ',', stored[2], '],"has_more":false}']);
  const expected = `{"data":[${views.join(',')}],"has_more":false}`;
  for (const round of ['first', 'cached']) {
    const result = toolResult(page());
    assert.equal(
      result.text,
      `{"content":[{"type":"text","text":${JSON.stringify(expected)}}],"structuredContent":${expected},"isError":false}`,
      round,
    );
    assert.deepEqual(result.bytes(buffers), Buffer.from(result.text), `${round}: bytes`);
  }
  // A control character JSON text never holds raw: the answer falls back to JSON.stringify's way.
  const odd = '{"a":"\u0001"}';
  const withOdd = toolResult(new JsonText([new StoredText(odd, etagOfText(odd))]));
  assert.deepEqual(
    withOdd.bytes(buffers),
    Buffer.from(`{"content":[{"type":"text","text":${JSON.stringify(odd)}}],"structuredContent":${odd},"isError":false}`),
  );
});

test('a page with cached bytes (a cached one) and its cached documents write the same bytes, quoted and not, again and again', () => {
  const views = [
    JSON.stringify({ name: 'Thing "one"', path: 'C:\\tmp\\x', city: 'Köln', emoji: '😀' }),
    JSON.stringify({ a: [1, 2, { b: 'c' }] }, null, '\t').replace(/\n/g, '\r\n'),
  ];
  const stored = views.map((text) => new StoredText(text, etagOfText(text)).cacheBytes());
  const expected = `{"data":[${views.join(',')}],"has_more":false}`;
  const page = new JsonText(['{"data":[', stored[0], ',', stored[1], '],"has_more":false}']).cacheBytes();
  for (const round of [1, 2, 3]) {
    assert.deepEqual(page.bytes(buffers), Buffer.from(expected), `round ${round}: the page's bytes`);
    const result = toolResult(page);
    assert.equal(result.text, `{"content":[{"type":"text","text":${JSON.stringify(expected)}}],"structuredContent":${expected},"isError":false}`);
    assert.deepEqual(result.bytes(buffers), Buffer.from(result.text), `round ${round}: the tool result's bytes`);
  }
  assert.equal(page.bytes(buffers), page.bytes(buffers), 'made once and shared');
  // A raw control character: the quoted copy falls back to JSON.stringify's way, cached or not.
  const odd = '{"a":"\u0001"}';
  const oddPage = new JsonText([new StoredText(odd, etagOfText(odd)).cacheBytes()]).cacheBytes();
  assert.deepEqual(
    toolResult(oddPage).bytes(buffers),
    Buffer.from(`{"content":[{"type":"text","text":${JSON.stringify(odd)}}],"structuredContent":${odd},"isError":false}`),
  );
});
