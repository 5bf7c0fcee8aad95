// The COPY export's lines (src/modules/exports/stream.ts oneDocumentPerLine): COPY quotes a document holding a raw
// line break (whitespace between its tokens); the quotes go and the breaks become spaces, in whatever chunks it comes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { oneDocumentPerLine } from '../src/modules/exports/stream.ts';

const through = (chunks: string[]) => text(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(oneDocumentPerLine()));

test('documents without a quote pass unchanged; a quoted one loses its quotes and line breaks, across chunk boundaries', async () => {
  assert.equal(await through(['{"a":1}\n{"b":"x"}\n']), '{"a":1}\n{"b":"x"}\n');
  const quoted = '{"a":1}\n\x01{"b":\n\r"é"}\x01\n{"c":3}\n';
  const expected = '{"a":1}\n{"b":  "é"}\n{"c":3}\n';
  assert.equal(await through([quoted]), expected);
  for (let cut = 1; cut < Buffer.byteLength(quoted); cut++) {
    const bytes = Buffer.from(quoted);
    const out = await text(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]).pipe(oneDocumentPerLine()));
    assert.equal(out, expected, `cut at byte ${cut}`);
  }
  for (const line of expected.trim().split('\n')) JSON.parse(line);
});
