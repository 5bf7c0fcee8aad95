// EXTENSIONS 1, the guarantee: a consumer that follows next_cursor sees every
// event exactly once, in a stable order, even when events commit
// concurrently and out of created_at order.
//
// On PostgreSQL many connections write events through the service's own
// emit() at once: some transactions stay open (holding an event) while later
// ones commit, some begin early and write late (so they commit behind events
// with a later created_at), some roll back. A consumer follows the cursor
// through the REST API the whole time, with small pages. It must end with
// exactly the committed events, each once, in the order a fresh read gives.
// PGlite runs one transaction at a time, so there the writers interleave
// whole transactions with the consumer's reads: what applies (exactly once,
// stable, nothing of a rolled-back transaction) is checked the same way.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import pg from 'pg';
import { startTestService, freshTenant, type TestService } from './helpers/harness.ts';
import { isolatedDatabase, type IsolatedDatabase } from './helpers/webhooks.ts';
import { drainFeed } from './helpers/events-feed.ts';
import { emit } from '../src/platform/db/outbox.ts';
import type { Sql } from '../src/platform/db/db.ts';
import { EventReactions } from '../src/platform/db/outbox.ts';
import { DocumentCache } from '../src/platform/read-path/document-cache.ts';
import { Keyring } from '../src/platform/edge/secret-box.ts';

const onPostgres = Boolean(process.env.DATABASE_URL);
const WRITERS = onPostgres ? 12 : 4;
const TRANSACTIONS_PER_WRITER = onPostgres ? 12 : 8;

let svc: TestService;
let data: IsolatedDatabase;
before(async () => {
  data = await isolatedDatabase();
  // The consumer polls without pause: lift the per-key rate limit for this file.
  svc = await startTestService({ ...data.env, RATE_LIMIT_REST_PER_MINUTE: '1000000' });
});
after(async () => {
  await svc?.close();
  await data?.drop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One transaction of a writer: runs `body` on a Sql in an open transaction, then commits or rolls back. */
type Transaction = (body: (tx: Sql) => Promise<void>, rollback: boolean) => Promise<void>;

/** A writer with a connection of its own (PostgreSQL), or the service's Db (PGlite: one transaction at a time). */
async function openWriter(): Promise<{ transaction: Transaction; close(): Promise<void> }> {
  if (!onPostgres) {
    const transaction: Transaction = async (body, rollback) => {
      await svc.service.db
        .tx(async (tx) => {
          await body(tx);
          if (rollback) throw new Error('rolled back on purpose');
        })
        .catch((err) => {
          if (!rollback) throw err;
        });
    };
    return { transaction, close: async () => {} };
  }
  const client = new pg.Client({ connectionString: data.env.DATABASE_URL });
  await client.connect();
  const sql: Sql = {
    query: async (text, params) => {
      const res = await client.query(text, params as unknown[]);
      return { rows: res.rows, rowCount: res.rowCount ?? 0 };
    },
    exec: async (script) => void (await client.query(script)),
    afterCommit: () => {},
    reactions: new EventReactions(),
    documentCache: new DocumentCache(),
    keyring: new Keyring(),
  };
  const transaction: Transaction = async (body, rollback) => {
    await client.query('BEGIN');
    try {
      await body(sql);
      await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  };
  return { transaction, close: () => client.end() };
}

interface Ledger {
  committed: string[];
  rolledBack: string[];
}

/** Emits `count` events (order.updated about fresh order ids) in the transaction; returns their ids. */
async function emitSome(tx: Sql, accountId: string, count: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const event = await emit(tx, accountId, 'order.updated', { order: { id: crypto.randomUUID() }, changed: ['admin_notes'], source: 'api', label });
    ids.push(event.id);
  }
  return ids;
}

/** A consumer following the cursor with small pages until told to stop and caught up. */
function startConsumer(key: string) {
  const seen: any[] = [];
  let cursor: string | null = null;
  let stopping = false;
  const done = (async () => {
    let quietRounds = 0;
    for (;;) {
      const page = await drainFeed(svc.url, key, cursor, { limit: 7 });
      seen.push(...page.events);
      cursor = page.cursor;
      quietRounds = page.events.length === 0 ? quietRounds + 1 : 0;
      if (stopping && quietRounds >= 3) return;
      await sleep(onPostgres ? 5 : 20);
    }
  })();
  return {
    seen,
    async stop() {
      stopping = true;
      await done;
    },
  };
}

test('a consumer following the cursor sees every committed event exactly once while transactions commit out of order', async () => {
  const { accountId, key } = await freshTenant(svc.url, { scopes: ['orders:read'] });
  const ledger: Ledger = { committed: [], rolledBack: [] };
  const consumer = startConsumer(key);

  // The hazard made certain first (PostgreSQL: PGlite runs one transaction at a time, so it cannot arise there): a
  // transaction starts (its events get that early created_at), a later one commits and is read, and only then does the
  // first write and commit. A cursor on created_at would already be past its event.
  let earlyIds: string[] = [];
  let lateIds: string[] = [];
  if (onPostgres) {
    const early = await openWriter();
    const late = await openWriter();
    let releaseEarly!: () => void;
    const earlyMayWrite = new Promise<void>((resolve) => (releaseEarly = resolve));
    const earlyDone = early.transaction(async (tx) => {
      await tx.query('SELECT now()'); // the transaction has started: its now() is fixed
      await earlyMayWrite;
      earlyIds = await emitSome(tx, accountId, 2, 'early');
    }, false);
    await sleep(30);
    await late.transaction(async (tx) => {
      lateIds = await emitSome(tx, accountId, 1, 'late');
    }, false);
    ledger.committed.push(...lateIds);
    const deadline = Date.now() + 15_000;
    while (!consumer.seen.some((e) => e.id === lateIds[0])) {
      assert.ok(Date.now() < deadline, 'the consumer reads the later transaction while the earlier one is still open');
      await sleep(10);
    }
    releaseEarly();
    await earlyDone;
    ledger.committed.push(...earlyIds);
    await early.close();
    await late.close();
  }

  // Then a storm: writers that hold events open, write late, commit quickly or roll back, all at once.
  const writers = await Promise.all(Array.from({ length: WRITERS }, () => openWriter()));
  await Promise.all(
    writers.map(async (writer, w) => {
      for (let i = 0; i < TRANSACTIONS_PER_WRITER; i++) {
        const rollback = Math.random() < 0.1;
        const pattern = i % 3;
        const hold = Math.floor(Math.random() * (onPostgres ? 150 : 20));
        let ids: string[] = [];
        await writer.transaction(async (tx) => {
          if (pattern === 1) {
            await tx.query('SELECT now()'); // begin early, write late
            await sleep(hold);
          }
          ids = await emitSome(tx, accountId, 1 + ((w + i) % 3), `w${w}-t${i}`);
          if (pattern === 2) await sleep(hold); // hold the written events open
        }, rollback);
        (rollback ? ledger.rolledBack : ledger.committed).push(...ids);
      }
    }),
  );
  await Promise.all(writers.map((w) => w.close()));
  await consumer.stop();

  const seenIds = consumer.seen.map((e) => e.id);
  assert.equal(new Set(seenIds).size, seenIds.length, 'no event was handed out twice');
  assert.deepEqual([...seenIds].sort(), [...ledger.committed].sort(), 'every committed event was handed out');
  assert.ok(!seenIds.some((id) => ledger.rolledBack.includes(id)), 'nothing of a rolled-back transaction');
  assert.ok(ledger.committed.length >= WRITERS * TRANSACTIONS_PER_WRITER, `a real load: ${ledger.committed.length} events`);

  const fresh = (await drainFeed(svc.url, key, null, { limit: 200 })).events.map((e) => e.id);
  assert.deepEqual(seenIds, fresh, 'the followed sequence is the one a later fresh read gives');

  if (onPostgres) {
    // The early transaction's events came after an event with a later created_at: a created_at cursor would have lost them.
    const at = (id: string) => seenIds.indexOf(id);
    assert.ok(at(earlyIds[0]) > at(lateIds[0]), 'the early-started events were handed out after the later one');
    const createdAt = new Map(consumer.seen.map((e) => [e.id, e.created_at]));
    assert.ok(createdAt.get(earlyIds[0])! < createdAt.get(lateIds[0])!, 'although their created_at is earlier');
  }
});
