// The house's rules, checked on the source (docs/ARCHITECTURE.md "The house"):
// the imports of src/ form no circle and run only downward through the layers,
// rooms depend on one another one way, every table has one owner and only its
// owner writes it, and a room's reads of other rooms' tables are the ones it declares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.join(import.meta.dirname, '../src');
const MODULES = path.join(SRC, 'modules');

/** Tables of the plumbing, written by src/platform, src/notify, src/operator or the courier simulator only: no room writes them. */
const PLATFORM_TABLES = [
  'schema_migrations',
  'settings',
  'idempotency_keys',
  'outbound_messages',
  'stored_views',
  'replica_read_marks',
  'courier_sim_parcels',
  'courier_sim_modes',
  'courier_sim_calls',
];

/**
 * The one write outside its owner: emit() writes the event into the events
 * room's outbox in the caller's transaction (DESIGN transactional outbox),
 * and the platform may not import a room to ask it.
 */
const OUTBOX_WRITE = { file: 'platform/db/outbox.ts', table: 'events' };

/**
 * Writes whose table is a template (`UPDATE ${table}`), which the scan cannot
 * read: each is declared here, keyed by file and template, with the tables it
 * can name read from the declaration that names them, so the ownership rule
 * sees them as it sees any other write; a new one fails until declared. The
 * platform writes two columns of a room's tables on the room's behalf, each
 * because the room handed it the column: a stored view's document (the room
 * declares the view with defineView; the platform keeps its document, DESIGN
 * stored views) and a sealed column's sealing (SEALED_COLUMNS; the value stays
 * what the room wrote, under another key).
 */
const TEMPLATED_WRITES: Record<string, { tables: () => Promise<string[]>; onBehalf?: string }> = {
  'platform/read-path/view-upkeep.ts UPDATE ${view.table}': { tables: storedViewTables, onBehalf: "a stored view's document, backfilled" },
  'platform/read-path/stored-view.ts UPDATE ${table}': {
    tables: storedViewTables,
    onBehalf: "a stored view's document, cleared when a table it reads changes",
  },
  'platform/edge/sealed-columns.ts UPDATE ${table}': {
    tables: async () => (await import('../src/platform/edge/sealed-columns.ts')).SEALED_COLUMNS.map((c) => c.table),
    onBehalf: "a sealed column's value, sealed anew",
  },
};

async function storedViewTables(): Promise<string[]> {
  return (await import('../src/views.ts')).views.filter((view) => view.stored).map((view) => view.table);
}

const rooms = fs
  .readdirSync(MODULES)
  .filter((d) => fs.statSync(path.join(MODULES, d)).isDirectory())
  .sort();

interface RoomTables {
  TABLES: readonly string[];
  READS: readonly string[];
}

async function roomTables(room: string): Promise<RoomTables> {
  const file = path.join(MODULES, room, 'tables.ts');
  assert.ok(fs.existsSync(file), `src/modules/${room}/tables.ts declares the tables ${room} owns`);
  return (await import(file)) as RoomTables;
}

async function ownedTables(): Promise<Map<string, string>> {
  const owner = new Map<string, string>();
  for (const room of rooms) {
    for (const table of (await roomTables(room)).TABLES) {
      assert.ok(!owner.has(table), `${table} is declared by both ${owner.get(table)} and ${room}`);
      owner.set(table, room);
    }
  }
  return owner;
}

/** The source without comment lines, so a comment that says "UPDATE" or "from '../x.ts'" is not code. */
function code(file: string): string {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n');
}

/** Every TypeScript file under src/, relative to it. */
const sourceFiles = fs
  .readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.split(path.sep).join('/'))
  .sort();

const roomOf = (file: string): string | null => /^modules\/([^/]+)\//.exec(file)?.[1] ?? null;

/** Tables an SQL write in this text names: INSERT INTO t, UPDATE t, DELETE FROM t (not ON CONFLICT ... DO UPDATE SET, nor FOR UPDATE). */
export function writtenTables(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)/g)) {
    if (!['set', 'skip', 'of', 'nowait'].includes(m[1].toLowerCase())) found.add(m[1]);
  }
  return [...found];
}

/** The templates that name the table of an SQL write in this text: `${table}` in UPDATE ${table} (not FOR UPDATE ${...}, nor DO UPDATE ${...}). */
export function templatedWrites(text: string): string[] {
  return [
    ...new Set(
      [...text.matchAll(/(?<!\b(?:FOR|DO)\s+)\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\$\{[^}]+\})/g)].map((m) => m[0].replace(/\s+/g, ' ')),
    ),
  ];
}

/** Names that follow FROM or JOIN in this text: the tables it reads, among others (functions, CTEs), which callers filter out. */
export function readNames(text: string): string[] {
  return [...new Set([...text.matchAll(/\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_]*)/g)].map((m) => m[1]))];
}

test('every table the migrations create has exactly one owner: a room, or the platform', async () => {
  const owner = await ownedTables();
  const created = new Set<string>();
  for (const file of fs.readdirSync(path.join(SRC, 'platform/db/migrations'))) {
    const sql = fs.readFileSync(path.join(SRC, 'platform/db/migrations', file), 'utf8');
    for (const m of sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)) created.add(m[1]);
  }
  for (const table of created) {
    if (PLATFORM_TABLES.includes(table)) assert.ok(!owner.has(table), `${table} is the platform's, yet ${owner.get(table)} declares it`);
    else assert.ok(owner.has(table), `no room declares ${table} in its tables.ts`);
  }
  for (const table of owner.keys()) assert.ok(created.has(table), `${owner.get(table)} declares ${table}, which no migration creates`);
});

test("only a table's owner writes it: no room writes another room's or the platform's tables, and nothing outside the rooms writes a room's", async () => {
  const owner = await ownedTables();
  const trespasses: string[] = [];
  const undeclared: string[] = [];
  const seen = new Set<string>();
  for (const file of sourceFiles) {
    const room = roomOf(file);
    const text = code(path.join(SRC, file));
    const writes = writtenTables(text).map((table) => ({ table, onBehalf: undefined as string | undefined, how: '' }));
    for (const template of templatedWrites(text)) {
      const declared = TEMPLATED_WRITES[`${file} ${template}`];
      seen.add(`${file} ${template}`);
      if (!declared) undeclared.push(`${file}: ${template} (declare the tables it can name in TEMPLATED_WRITES)`);
      else for (const table of new Set(await declared.tables())) writes.push({ table, onBehalf: declared.onBehalf, how: ` through ${template}` });
    }
    for (const { table, onBehalf, how } of writes) {
      const own = owner.get(table);
      const allowed = room
        ? own === room
        : own === undefined || (file === OUTBOX_WRITE.file && table === OUTBOX_WRITE.table) || (!!onBehalf && layerOf(file) === 'platform');
      if (!allowed) trespasses.push(`${file} writes ${table}${how} (owner: ${own ?? 'the platform'})`);
    }
  }
  assert.deepEqual(undeclared, [], 'a write whose table is a template says which tables it can name');
  assert.deepEqual(trespasses, []);
  assert.deepEqual(
    Object.keys(TEMPLATED_WRITES).filter((key) => !seen.has(key)),
    [],
    'every declared templated write is still in the source',
  );
});

test('a templated write names only the tables its declaration lists, each with an owner', async () => {
  const owner = await ownedTables();
  for (const [key, declared] of Object.entries(TEMPLATED_WRITES)) {
    const tables = await declared.tables();
    assert.ok(tables.length > 0, `${key}: names some table`);
    for (const table of tables) assert.ok(owner.has(table) || PLATFORM_TABLES.includes(table), `${key}: ${table} is a table of the service`);
  }
});

test("a room reads other rooms' tables only as its tables.ts declares (READS), and declares no read it does not make", async () => {
  const owner = await ownedTables();
  const undeclared: string[] = [];
  const unused: string[] = [];
  for (const room of rooms) {
    const declared = new Set((await roomTables(room)).READS);
    const read = new Map<string, string>();
    for (const file of sourceFiles.filter((f) => roomOf(f) === room)) {
      for (const table of readNames(code(path.join(SRC, file)))) {
        const own = owner.get(table);
        if (own && own !== room && !read.has(table)) read.set(table, file);
      }
    }
    for (const [table, file] of read) if (!declared.has(table)) undeclared.push(`${file} reads ${table} (owner: ${owner.get(table)})`);
    for (const table of declared) {
      if (!owner.has(table) || owner.get(table) === room) unused.push(`${room} declares it reads ${table}, which is not another room's table`);
      else if (!read.has(table)) unused.push(`${room} declares it reads ${table}, yet no SQL of it does`);
    }
  }
  assert.deepEqual(undeclared, [], "a new cross-room read goes into the room's READS (and so into review)");
  assert.deepEqual(unused, []);
});

test('the SQL scans find writes and reads and ignore what only looks like a write', () => {
  assert.deepEqual(writtenTables('UPDATE orders SET x = 1'), ['orders']);
  assert.deepEqual(writtenTables('INSERT INTO shipments (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id'), ['shipments']);
  assert.deepEqual(writtenTables('DELETE FROM segment_members WHERE true'), ['segment_members']);
  assert.deepEqual(writtenTables('SELECT * FROM orders FOR UPDATE SKIP LOCKED'), []);
  assert.deepEqual(writtenTables('SELECT * FROM orders o FOR UPDATE OF o'), []);
  assert.deepEqual(templatedWrites('UPDATE ${view.table} t SET document = NULL; INSERT INTO ${target} (id) VALUES (1); DELETE FROM ${t}'), [
    'UPDATE ${view.table}',
    'INSERT INTO ${target}',
    'DELETE FROM ${t}',
  ]);
  assert.deepEqual(templatedWrites('SELECT id FROM ${table} FOR UPDATE ${lock}; INSERT INTO x VALUES (1) ON CONFLICT DO UPDATE ${set}'), []);
  assert.deepEqual(readNames('SELECT 1 FROM orders o\n  LEFT JOIN LATERAL (SELECT id FROM shipments) s ON true JOIN pages p ON true'), [
    'orders',
    'shipments',
    'pages',
  ]);
});

/** Each file's relative imports (static, dynamic, type-only and re-exports), resolved to files of src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles) {
    const targets = new Set<string>();
    for (const m of code(path.join(SRC, file)).matchAll(/\bfrom\s+'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)|\bimport\s+'(\.[^']+)'/g)) {
      const target = path
        .relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), m[1] ?? m[2] ?? m[3]))
        .split(path.sep)
        .join('/');
      if (!target.startsWith('..')) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components of more than one node (or a node importing itself): each holds at least one circle. */
export function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** One shortest circle through the first member of a component, as "a -> b -> a". */
function oneCircle(graph: Map<string, string[]>, component: string[]): string {
  const inside = new Set(component);
  const start = component[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!inside.has(next)) continue;
      if (next === start) {
        const walk = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) walk.splice(1, 0, at);
        return [...walk, start].join(' -> ');
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return start;
}

test('circles: the imports of src/ form no circle', () => {
  const graph = importGraph();
  const found = circles(graph).map((c) => (c.length > 2 ? `${oneCircle(graph, c)} (${c.length} files: ${c.join(', ')})` : oneCircle(graph, c)));
  assert.deepEqual(found, []);
});

test('the circle finder finds every circle and nothing else', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
    ['e', ['e']],
    ['f', ['g']],
    ['g', ['f', 'a']],
  ]);
  assert.deepEqual(circles(graph), [['a', 'b', 'c'], ['e'], ['f', 'g']]);
  assert.equal(oneCircle(graph, ['a', 'b', 'c']), 'a -> b -> c -> a');
});

/**
 * The layers, lowest first, and what each may import besides itself. The
 * composition root (app.ts, server.ts, main.ts, cli.ts, cli/, views.ts) may
 * import anything; config.ts, the environment read once, belongs to the platform.
 */
const LAYERS: Record<string, { files: (file: string) => boolean; imports: string[] }> = {
  platform: { files: (f) => f.startsWith('platform/') || f === 'config.ts', imports: [] },
  notify: { files: (f) => f.startsWith('notify/'), imports: ['platform'] },
  couriers: { files: (f) => f.startsWith('couriers/'), imports: ['platform'] },
  rooms: { files: (f) => f.startsWith('modules/'), imports: ['platform', 'notify', 'couriers'] },
  transports: { files: (f) => f.startsWith('transports/'), imports: ['platform'] },
  workers: { files: (f) => f.startsWith('workers/'), imports: ['platform', 'rooms'] },
  operator: { files: (f) => f.startsWith('operator/'), imports: ['platform', 'notify', 'couriers', 'rooms', 'transports', 'workers'] },
};

const layerOf = (file: string): string | null => Object.entries(LAYERS).find(([, layer]) => layer.files(file))?.[0] ?? null;

for (const [name, layer] of Object.entries(LAYERS)) {
  test(`layers: ${name} imports ${layer.imports.length ? `only ${layer.imports.join(', ')} and itself` : 'only itself'}`, () => {
    const outward: string[] = [];
    for (const [file, targets] of importGraph()) {
      if (layerOf(file) !== name) continue;
      for (const target of targets) {
        const to = layerOf(target);
        if (to !== name && !(to && layer.imports.includes(to))) outward.push(`${file} imports ${target} (${to ?? 'the composition root'})`);
      }
    }
    assert.deepEqual(outward, []);
  });
}

/**
 * Issue 43: the read path has one door, platform/read-path/index.ts, for
 * everything above the platform (rooms, transports, the operator, the
 * composition root). The platform's own sub-rooms reach its files directly:
 * it is built on them (the Db, ETags, cursors), and through the door they
 * would import it back in a circle.
 */
test('above the platform, the read path is imported through its index alone', () => {
  const strays: string[] = [];
  for (const [file, targets] of importGraph()) {
    if (file.startsWith('platform/')) continue;
    for (const target of targets) {
      if (target.startsWith('platform/read-path/') && target !== 'platform/read-path/index.ts') strays.push(`${file} imports ${target}`);
    }
  }
  assert.deepEqual(strays, []);
});

test('rooms depend on one another one way: no circle among the rooms', () => {
  const graph = new Map<string, string[]>(rooms.map((room) => [room, []]));
  for (const [file, targets] of importGraph()) {
    const from = roomOf(file);
    if (!from) continue;
    for (const to of targets.map(roomOf)) if (to && to !== from && !graph.get(from)!.includes(to)) graph.get(from)!.push(to);
  }
  assert.deepEqual(
    circles(graph).map((c) => oneCircle(graph, c)),
    [],
  );
});

test('only the composition root subscribes reactions to domain events', () => {
  const subscribers = sourceFiles.filter((file) => /\breactions\.add\(/.test(code(path.join(SRC, file))));
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
