// Issue 43: the stored views' upkeep is checked in as migrations a reviewer
// reads, and must be what the declarations generate now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { views } from '../src/views.ts';
import { orderView } from '../src/modules/orders/view.ts';
import { productView } from '../src/modules/products/view.ts';
import type { View } from '../src/platform/stored-view.ts';
import { MIGRATIONS_DIR, VIEW_MIGRATION_COMMAND, outdatedViews, writeViewMigration } from '../src/platform/view-migrations.ts';

test('the migrations hold the upkeep every stored view declaration generates now', () => {
  const outdated = outdatedViews(views).map((v) => v.name);
  assert.deepEqual(outdated, [], `stored views ${outdated.join(', ')} changed without their migration: run \`${VIEW_MIGRATION_COMMAND}\` and commit the file it writes`);
});

test('a changed declaration is outdated until the next numbered migration holds its upkeep', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-view-migrations-'));
  for (const file of fs.readdirSync(MIGRATIONS_DIR)) fs.copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(dir, file));
  const changed: View = { ...productView, upkeepSql: `${productView.upkeepSql}\nCOMMENT ON COLUMN products.view_json IS 'changed';` };
  assert.deepEqual(outdatedViews([changed, orderView], dir), [changed]);
  const last = Number(fs.readdirSync(dir).sort().at(-1)!.slice(0, 3));
  const file = writeViewMigration([changed], dir);
  assert.equal(file, `${String(last + 1).padStart(3, '0')}_stored_views_product.sql`);
  assert.deepEqual(outdatedViews([changed, orderView], dir), []);
  fs.rmSync(dir, { recursive: true });
});
