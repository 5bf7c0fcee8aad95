// The COPY out parser (src/platform/db/copy-out.ts) on protocol bytes cut at
// every place a socket read may end: the rows' bytes come out whole and in
// order, and what follows the COPY (or an error) goes back to pg untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactCopyData, type CopyDataState } from '../src/platform/db/copy-out.ts';

function message(code: string, payload: Buffer | string = ''): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(5);
  header.write(code, 0, 'latin1');
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** Runs the parser over `reads` as a COPY stream would, until it ends or hands the connection back. */
function parse(reads: Buffer[]) {
  const pushed: Buffer[] = [];
  const handedBack: Buffer[] = [];
  let ended = false;
  let detached = false;
  const stream = {
    state: { code: 0, unread: 0 } as CopyDataState,
    push(chunk: Buffer | null) {
      if (chunk === null) ended = true;
      else pushed.push(Buffer.from(chunk));
      return true;
    },
    _buffer: { push: (chunk: Buffer) => handedBack.push(Buffer.from(chunk)) },
    _detach: () => (detached = true),
    _cleanup: () => {},
  };
  for (const read of reads) {
    if (detached) {
      handedBack.push(read);
      continue;
    }
    // A copy: the parser moves bytes inside the read it is given.
    compactCopyData.call(stream, Buffer.from(read));
  }
  return { rows: Buffer.concat(pushed).toString(), handedBack: Buffer.concat(handedBack).toString('latin1'), ended, detached };
}

/** Every way to cut `bytes` into two reads, and a few hundred cuts into many. */
function cuts(bytes: Buffer): Buffer[][] {
  const all: Buffer[][] = [];
  for (let at = 0; at <= bytes.length; at++) all.push([bytes.subarray(0, at), bytes.subarray(at)]);
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
  for (let n = 0; n < 300; n++) {
    const reads: Buffer[] = [];
    for (let from = 0; from < bytes.length;) {
      const size = 1 + Math.floor(random() * 12);
      reads.push(bytes.subarray(from, from + size));
      from += size;
    }
    all.push(reads);
  }
  return all;
}

const rows = ['{"id":1,"name":"Ana"}\n', '', '{"id":2,"note":"naïve, \\"quoted\\""}\n', 'x'.repeat(300) + '\n'];
const after = message('C', 'COPY 4\0').toString('latin1') + message('Z', 'T').toString('latin1');

test('the rows of a COPY come out whole and in order, however the reads cut the messages; what follows CopyDone goes back to pg', () => {
  const bytes = Buffer.concat([
    message('H', Buffer.from([0, 0, 1, 0, 0])),
    message('d', rows[0]),
    message('N', 'SNOTICE\0Mhello\0\0'),
    message('d', rows[1]),
    message('S', 'TimeZone\0UTC\0'),
    message('d', rows[2]),
    message('d', rows[3]),
    message('c'),
    Buffer.from(after, 'latin1'),
  ]);
  for (const reads of cuts(bytes)) {
    const result = parse(reads);
    assert.equal(result.rows, rows.join(''), `reads of ${reads.map((r) => r.length).join(', ')} bytes`);
    assert.equal(result.handedBack, after);
    assert.ok(result.ended && result.detached);
  }
});

test('an error in the middle of a COPY goes back to pg from its first byte, and the stream does not end as if whole', () => {
  const error = message('E', 'SERROR\0C57P01\0Mterminating connection\0\0');
  const bytes = Buffer.concat([message('H', Buffer.from([0, 0, 0])), message('d', rows[0]), error]);
  for (const reads of cuts(bytes)) {
    const result = parse(reads);
    assert.equal(result.rows, rows[0]);
    assert.equal(result.handedBack, error.toString('latin1'));
    assert.ok(result.detached);
    assert.equal(result.ended, false);
  }
});
