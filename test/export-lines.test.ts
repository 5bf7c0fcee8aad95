// The COPY export's lines. JSONL (src/modules/exports/stream.ts oneDocumentPerLine): COPY quotes a document holding a
// raw line break (whitespace between its tokens); the quotes go and the breaks become spaces, in whatever chunks it
// comes. CSV (csv-copy.ts crlfRows): COPY's LF row ends become CRLF, line breaks inside quoted fields stay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { oneDocumentPerLine } from '../src/modules/exports/stream.ts';
import { crlfRows } from '../src/modules/exports/csv-copy.ts';

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

test("CSV rows from COPY: each row's closing lone CR cell and LF become CRLF, after the header, in whatever chunks they come", async () => {
  // COPY's rows: the last cell is always the lone CR, written ,"\r" before LF; a field may hold CR, LF and quotes.
  const copied = 'a,"x\r\n""y"",\r""\n",1,"\r"\nb,"\r",,"\r"\n,"""\r""","\n","\r"\n';
  const expected = 'h1,h2,h3\r\na,"x\r\n""y"",\r""\n",1\r\nb,"\r",\r\n,"""\r""","\n"\r\n';
  const through = (parts: Buffer[]) => text(Readable.from(parts).pipe(crlfRows('h1,h2,h3\r\n')));
  assert.equal(await through([Buffer.from(copied)]), expected);
  const bytes = Buffer.from(copied);
  for (let cut = 1; cut < bytes.length; cut++) {
    for (const second of [cut + 1, cut + 3, bytes.length]) {
      const parts = [bytes.subarray(0, cut), bytes.subarray(cut, second), bytes.subarray(second)].filter((p) => p.length);
      assert.equal(await through(parts), expected, `cut at bytes ${cut} and ${second}`);
    }
  }
  assert.equal(await through([]), 'h1,h2,h3\r\n', 'no rows: the header alone');
});
