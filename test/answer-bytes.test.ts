// Large answers are written into buffers borrowed from a pool per answer and
// reused: each buffer must be borrowed by one answer at a time, and come back only once the
// socket has written it, or answers would carry each other's bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import Fastify from 'fastify';
import { AnswerBufferPool } from '../src/platform/read-path/answer-bytes.ts';
import { sendJsonText } from '../src/transports/json-answer.ts';
import { JsonText } from '../src/platform/read-path/json-text.ts';

test('a buffer released is borrowed again, once, and only a borrowed one comes back', () => {
  const pool = new AnswerBufferPool();
  const first = pool.borrow(100_000);
  assert.equal(first.length, 100_000);
  pool.release(first);
  pool.release(first); // twice: still one buffer to borrow
  const again = pool.borrow(120_000);
  assert.equal(again.buffer, first.buffer, 'the same size class reuses the memory released');
  const other = pool.borrow(120_000);
  assert.notEqual(other.buffer, again.buffer, 'a buffer released twice is not borrowed by two answers');

  const foreign = Buffer.alloc(100_000);
  pool.release(foreign);
  assert.notEqual(pool.borrow(100_000).buffer, foreign.buffer, 'a buffer the pool did not give out is never given out');
  const small = pool.borrow(1_000);
  pool.release(small);
  const next = pool.borrow(1_000);
  assert.ok(next.buffer !== small.buffer || next.byteOffset !== small.byteOffset, 'small answers are not pooled');
});

test('idle buffers are bounded: past 32 MiB what comes back is left to the garbage collector', () => {
  const pool = new AnswerBufferPool();
  const size = 4 * 1024 * 1024;
  const taken = Array.from({ length: 10 }, () => pool.borrow(size));
  for (const bytes of taken) pool.release(bytes);
  const borrowedAgain = new Set(taken.map((bytes) => bytes.buffer));
  const retaken = Array.from({ length: 10 }, () => pool.borrow(size));
  assert.equal(retaken.filter((bytes) => borrowedAgain.has(bytes.buffer)).length, 8);
});

test('two pools (two services in one process) pool and bound their buffers apart', () => {
  const one = new AnswerBufferPool();
  const other = new AnswerBufferPool();
  const given = one.borrow(100_000);
  other.release(given);
  assert.notEqual(other.borrow(100_000).buffer, given.buffer, 'a buffer borrowed from one pool does not come back to the other');
  one.release(given);
  assert.equal(one.borrow(100_000).buffer, given.buffer, 'it comes back to the pool it was borrowed from');
  // One pool full to its bound leaves the other pooling what comes back.
  const size = 4 * 1024 * 1024;
  const taken = Array.from({ length: 8 }, () => one.borrow(size));
  for (const bytes of taken) one.release(bytes);
  const own = other.borrow(size);
  other.release(own);
  assert.equal(other.borrow(size).buffer, own.buffer);
});

/** A GET whose reader stops reading at first (its window fills, the server's write waits), then reads it all. */
function fetchAfterPause(port: number, path: string, pauseMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      response.pause();
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      setTimeout(() => response.resume(), pauseMs);
    });
    request.on('error', reject);
  });
}

test('an answer still being written keeps its buffer; the answers after it get their own bytes', async () => {
  const app = Fastify();
  const buffers = new AnswerBufferPool();
  // 6 MB answers, each filled with its own letter: more than the kernel takes for a reader that does not read.
  const SIZE = 6_000_000;
  let waitingSent!: () => void;
  const sent = new Promise<void>((resolve) => (waitingSent = resolve));
  app.get('/answer/:letter', (request, reply) => {
    const letter = (request.params as { letter: string }).letter;
    if (letter === 'w') setTimeout(waitingSent, 100);
    return sendJsonText(reply, new JsonText(JSON.stringify({ letter, fill: letter.repeat(SIZE) })), buffers);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  try {
    const waiting = fetchAfterPause(port, '/answer/w', 1_000);
    await sent;
    // While the waiting answer is unwritten, others take (and give back) buffers of its size class.
    const letters = 'abcdef'.split('');
    for (const letter of letters) {
      const text = await fetch(`http://127.0.0.1:${port}/answer/${letter}`).then((response) => response.text());
      assert.deepEqual(JSON.parse(text), { letter, fill: letter.repeat(SIZE) });
    }
    assert.deepEqual(JSON.parse(await waiting), { letter: 'w', fill: 'w'.repeat(SIZE) }, 'its own bytes, not a later answer written over them');
  } finally {
    await app.close();
  }
});
