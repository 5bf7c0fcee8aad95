// The Batcher (src/platform/db/batcher.ts): one flush for many items, results in
// order, an idle batcher flushing at once, and spacingMs letting batches grow
// under load. Behaviour only (which items share a flush), never how fast.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Batcher } from '../src/platform/db/batcher.ts';

function recordingBatcher(options: { maxBatch: number; parallel: number; spacingMs?: number }) {
  const flushes: number[][] = [];
  const batcher = new Batcher<number, number>(async (items) => {
    flushes.push(items);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return items.map((n) => n * 10);
  }, options);
  return { batcher, flushes };
}

test('items added in one turn share one flush, and each gets its own result', async () => {
  const { batcher, flushes } = recordingBatcher({ maxBatch: 100, parallel: 1 });
  const results = await Promise.all([1, 2, 3].map((n) => batcher.add(n)));
  assert.deepEqual(results, [10, 20, 30]);
  assert.deepEqual(flushes, [[1, 2, 3]]);
});

test('a batch never holds more than maxBatch items', async () => {
  const { batcher, flushes } = recordingBatcher({ maxBatch: 2, parallel: 1 });
  await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.add(n)));
  assert.deepEqual(flushes, [[1, 2], [3, 4], [5]]);
});

test('a failed flush rejects every item of its batch', async () => {
  const batcher = new Batcher<number, number>(
    async () => {
      throw new Error('database gone');
    },
    { maxBatch: 10, parallel: 1 },
  );
  const settled = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
  assert.deepEqual(
    settled.map((s) => s.status),
    ['rejected', 'rejected'],
  );
});

test('spacingMs: an idle batcher flushes at once; items arriving soon after wait to share the next flush', async () => {
  const { batcher, flushes } = recordingBatcher({ maxBatch: 100, parallel: 2, spacingMs: 2_000 });
  const first = batcher.add(1);
  await first;
  assert.deepEqual(flushes, [[1]], 'the first item went alone, without waiting for the spacing');
  // Ten items, one every few milliseconds, all well within the 2 s after the first flush began: one flush, not ten.
  const later: Array<Promise<number>> = [];
  for (let n = 2; n <= 11; n++) {
    later.push(batcher.add(n));
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  assert.deepEqual(await Promise.all(later), [20, 30, 40, 50, 60, 70, 80, 90, 100, 110]);
  assert.deepEqual(flushes, [[1], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]);
});

test('spacingMs: a full batch does not wait for the spacing', async () => {
  const { batcher, flushes } = recordingBatcher({ maxBatch: 3, parallel: 1, spacingMs: 60_000 });
  await batcher.add(0);
  await new Promise((resolve) => setTimeout(resolve, 20)); // the first flush is over
  const waiting = [batcher.add(1), batcher.add(2)];
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(flushes, [[0]], 'two items wait for the spacing');
  waiting.push(batcher.add(3)); // the third fills the batch: it goes now, not in a minute
  assert.deepEqual(await Promise.all(waiting), [10, 20, 30]);
  assert.deepEqual(flushes, [[0], [1, 2, 3]]);
});

test('enqueue: items nobody waits on are flushed in batches, and drained() resolves once every one is flushed', async () => {
  const { batcher, flushes } = recordingBatcher({ maxBatch: 3, parallel: 1 });
  await batcher.drained(); // an idle batcher is drained at once
  for (let n = 1; n <= 7; n++) batcher.enqueue(n);
  await batcher.drained();
  assert.deepEqual(flushes, [[1, 2, 3], [4, 5, 6], [7]]);
  assert.equal(batcher.size, 0);
});
