// The house's rules, checked on the source (docs/ARCHITECTURE.md):
// every table has one owner, and no room's SQL writes another room's tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.join(import.meta.dirname, '../src');
const MODULES = path.join(SRC, 'modules');

/** Tables of the plumbing, written by src/platform, src/notify or src/operator only: no room writes them. */
const PLATFORM_TABLES = [
  'schema_migrations', 'settings', 'idempotency_keys', 'outbound_messages', 'stored_views', 'request_logs', 'approvals', 'replica_read_marks',
];

const rooms = fs.readdirSync(MODULES).filter((d) => fs.statSync(path.join(MODULES, d)).isDirectory()).sort();

async function ownedTables(): Promise<Map<string, string>> {
  const owner = new Map<string, string>();
  for (const room of rooms) {
    const file = path.join(MODULES, room, 'tables.ts');
    assert.ok(fs.existsSync(file), `src/modules/${room}/tables.ts declares the tables ${room} owns`);
    const { TABLES } = (await import(file)) as { TABLES: readonly string[] };
    for (const table of TABLES) {
      assert.ok(!owner.has(table), `${table} is declared by both ${owner.get(table)} and ${room}`);
      owner.set(table, room);
    }
  }
  return owner;
}

/** The source without comment lines, so a comment that says "UPDATE" is not a write. */
function code(file: string): string {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n');
}

/** Tables an SQL write in this text names: INSERT INTO t, UPDATE t, DELETE FROM t (not ON CONFLICT ... DO UPDATE SET, nor FOR UPDATE). */
export function writtenTables(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)/g)) {
    if (!['set', 'skip', 'of', 'nowait'].includes(m[1].toLowerCase())) found.add(m[1]);
  }
  return [...found];
}

function roomFiles(room: string): string[] {
  const dir = path.join(MODULES, room);
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
}

test('every table the migrations create has exactly one owner: a room, or the platform', async () => {
  const owner = await ownedTables();
  const created = new Set<string>();
  for (const file of fs.readdirSync(path.join(SRC, 'platform/migrations'))) {
    const sql = fs.readFileSync(path.join(SRC, 'platform/migrations', file), 'utf8');
    for (const m of sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)) created.add(m[1]);
  }
  for (const table of created) {
    if (PLATFORM_TABLES.includes(table)) assert.ok(!owner.has(table), `${table} is the platform's, yet ${owner.get(table)} declares it`);
    else assert.ok(owner.has(table), `no room declares ${table} in its tables.ts`);
  }
  for (const table of owner.keys()) assert.ok(created.has(table), `${owner.get(table)} declares ${table}, which no migration creates`);
});

test("no room's SQL writes another room's tables", async () => {
  const owner = await ownedTables();
  const trespasses: string[] = [];
  for (const room of rooms) {
    for (const file of roomFiles(room)) {
      for (const table of writtenTables(code(file))) {
        if (owner.get(table) !== room) trespasses.push(`${path.relative(SRC, file)} writes ${table} (owner: ${owner.get(table) ?? 'the platform'})`);
      }
    }
  }
  assert.deepEqual(trespasses, []);
});

test('the SQL scan finds writes and ignores what only looks like one', () => {
  assert.deepEqual(writtenTables('UPDATE orders SET x = 1'), ['orders']);
  assert.deepEqual(writtenTables('INSERT INTO shipments (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id'), ['shipments']);
  assert.deepEqual(writtenTables('DELETE FROM segment_members WHERE true'), ['segment_members']);
  assert.deepEqual(writtenTables('SELECT * FROM orders FOR UPDATE SKIP LOCKED'), []);
  assert.deepEqual(writtenTables('SELECT * FROM orders o FOR UPDATE OF o'), []);
});

/** Relative imports of the TypeScript files under `dir`, as [file, resolved target relative to src]. */
function importsUnder(dir: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  const root = path.join(SRC, dir);
  for (const file of fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const full = path.join(root, file);
    for (const m of code(full).matchAll(/\bfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/g)) {
      found.push([path.relative(SRC, full), path.relative(SRC, path.resolve(path.dirname(full), m[1] ?? m[2]))]);
    }
  }
  return found;
}

test('the platform imports no room, courier, transport or operator code: rooms register into it', () => {
  const outward = importsUnder('platform').filter(([, target]) => /^(modules|couriers|transports|operator)\//.test(target));
  assert.deepEqual(outward, []);
});

test('rooms import no transport and no operator code', () => {
  const outward = importsUnder('modules').filter(([, target]) => /^(transports|operator)\//.test(target));
  assert.deepEqual(outward, []);
});

test('transports know no room', () => {
  const outward = importsUnder('transports').filter(([, target]) => /^(modules|couriers)\//.test(target));
  assert.deepEqual(outward, []);
});

test('only the composition root subscribes reactions to domain events', () => {
  const subscribers: string[] = [];
  for (const file of fs.readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    if (/\breactions\.add\(/.test(code(path.join(SRC, file)))) subscribers.push(file);
  }
  assert.deepEqual(subscribers, ['app.ts']);
});

test('a gate declared on an operation is said in the OpenAPI document', async () => {
  const { operations, publicOpenApi } = await import('../src/app.ts');
  const doc = publicOpenApi('http://localhost') as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const gated = operations.filter((op) => op.feature);
  assert.ok(gated.length >= 3, 'the inventory operations declare their feature');
  for (const op of operations.filter((o) => o.rest !== false)) {
    const entry = doc.paths[op.path.replace(/:([A-Za-z_]+)/g, '{$1}')][op.method.toLowerCase()];
    assert.equal(entry['x-required-feature'], op.feature?.name, `${op.name}: x-required-feature`);
    if (op.feature) assert.match(String(entry.description), /503 migration_pending/, `${op.name}: said in words`);
  }
});
