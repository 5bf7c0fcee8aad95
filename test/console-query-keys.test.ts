// The console's cached reads take their keys from one factory
// (console/src/query-keys.ts): a page's query and the writes that refresh it
// cannot drift apart by a spelling, and a list's key begins with what a
// write invalidates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { queryKeys } from '../console/src/query-keys.ts';

const CONSOLE_SRC = path.join(import.meta.dirname, '../console/src');

test('every queryKey and setQueryData of the console names a key of query-keys.ts, never a literal', () => {
  const literal: string[] = [];
  let uses = 0;
  for (const file of fs.readdirSync(CONSOLE_SRC, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f) && f !== 'query-keys.ts')) {
    const text = fs.readFileSync(path.join(CONSOLE_SRC, file), 'utf8');
    for (const m of text.matchAll(/\b(?:queryKey:|setQueryData\(|getQueryData\()\s*([^,}\n]+)/g)) {
      uses++;
      if (!m[1].startsWith('queryKeys.')) literal.push(`${file}: ${m[0].trim()}`);
    }
  }
  assert.ok(uses > 40, `the scan sees the console's queries (${uses})`);
  assert.deepEqual(literal, []);
});

test("a list's page keys begin with the key its writes invalidate", () => {
  const begins = (page: readonly unknown[], all: readonly unknown[]) => assert.deepEqual(page.slice(0, all.length), [...all]);
  begins(queryKeys.accountsPage('q', 'c'), queryKeys.accounts());
  begins(queryKeys.ordersPage('a', {}, 50, undefined), queryKeys.orders('a'));
  begins(queryKeys.shipmentsPage('a', '', '', undefined), queryKeys.shipments('a'));
  begins(queryKeys.movementsPage('a', 'p', '', undefined), queryKeys.movements('a'));
  begins(queryKeys.deliveriesPage('w', '', '', undefined), queryKeys.deliveries('w'));
  begins(queryKeys.deliveryAttempts('d'), queryKeys.attempts());
  begins(queryKeys.approvalsWithStatus('a', 'pending'), queryKeys.approvals('a'));
  // The batch page's placeholder keeps the previous items only for the same batch: the id is second.
  assert.equal(queryKeys.batchItemsPage('b', undefined, undefined, undefined)[1], 'b');
});
