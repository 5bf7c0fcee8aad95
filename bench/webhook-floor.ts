// The floor of bench:webhooks' drain (BENCH_MODE=floor, or BENCH_FLOOR=1 beside
// a drain): the least work a durable webhook sender must do to send the
// drain's 10,000 due retries, written apart from the service so that it does
// not move with the service's code. bench/webhooks.ts forks this file as a
// child process (its own core, as the service has) once the drain's rows are
// due and the service has stopped; it then, per pass:
// - claims due deliveries in batches, one UPDATE ... RETURNING each (the
//   attempt counted and a lease taken, SKIP LOCKED, oldest due first, as the
//   engine's worker claims), with the subscription's URL and secret as stored
//   and the body built by PostgreSQL from the event row: the same bytes as the
//   engine's JSON.stringify of its envelopeJson() (data is kept as JSON text);
// - signs each attempt with a fresh timestamp, X-Merx-Signature (what the
//   bench's receiver verifies) and the Standard Webhooks webhook-signature,
//   each one HMAC-SHA256; the secrets are sealed at rest, so the URL -> secret
//   pairs the bench was given at creation stand in for opening them once (the
//   engine opens each sealed text once and keeps it);
// - POSTs over HTTPS with keep-alive (one undici Pool per subscription), at
//   most LANE_WIDTH attempts in flight per subscription, as the engine's lanes;
// - records the outcomes in batches: one statement, an UPDATE of the
//   deliveries (status, code, delivered_at or the next due time) and an
//   INSERT of their attempt rows with the columns the table requires (no
//   request headers, no answer), on a connection with asynchronous commit, as
//   the engine's bookkeeping.
// Left out, as a floor: the URL policy re-check, flow rules, subscriptions' last_*
// columns, X-Merx-Resource-Version, the attempt log's headers and answer, emails.
import crypto from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';
import { fork } from 'node:child_process';
import pg from 'pg';
import { Pool } from 'undici';

/** LANE_WIDTH of src/modules/webhooks/delivery/lanes.ts (32 at 4c0b596 and on main, November 2026), fixed here: the yardstick stays put. */
const LANE_WIDTH = 32;
/** The engine's CLAIM_BATCH and RECORD_BATCH (engine-tuning.ts). */
const CLAIM_BATCH = 200;
const RECORD_BATCH = 500;
const LEASE_SEC = 120;
const TIMEOUT_MS = 10_000;
const BACKOFF_SEC = [60, 300, 1800, 7200, 43200];
const MAX_ATTEMPTS = 6;

export interface FloorConfig {
  databaseUrl: string;
  /** The receiver's throwaway CA. */
  caFile: string;
  /** Subscription URL -> its secret, as returned at creation. */
  secrets: Record<string, string>;
  /** The pass's clock (ISO), as the engine's job run gets it: due rows are those due by then. */
  now: string;
}

export interface FloorResult {
  claimed: number;
  delivered: number;
  /** Outcomes other than delivered, a few examples. */
  failures: string[];
}

export interface FloorProcess {
  pid: number;
  death(): string | null;
  /** Runs one pass; resolves with the number of deliveries claimed once every outcome is recorded. */
  run(): Promise<FloorResult>;
  /** Closes its connections and exits (after the bench has read its CPU time). */
  stop(): Promise<void>;
}

// ---------------------------------------------------------------- the bench's side

/** Forks the floor and waits until it has connected to PostgreSQL (its backends then exist for the CPU accounting). */
export function startFloor(config: FloorConfig): Promise<FloorProcess> {
  const child = fork(import.meta.filename, [], {
    env: { ...process.env, MERX_FLOOR_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  let death: string | null = null;
  const collect = (chunk: Buffer) => void (output = (output + chunk.toString('utf8')).slice(-8000));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!stopping || code !== 0) death = `floor exited (code ${code}, signal ${signal}); last output:\n${output.slice(-4000)}`;
      resolve();
    }),
  );
  const message = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: { type: string; value: T }) => {
        if (m.type === 'failed') reject(new Error(`floor failed: ${m.value}`));
        else if (m.type === type) resolve(m.value);
        else return;
        child.off('message', onMessage);
      };
      child.on('message', onMessage);
      void exited.then(() => reject(new Error(death ?? 'floor exited')));
    });
  const floor: FloorProcess = {
    pid: child.pid!,
    death: () => death,
    run: () => {
      const done = message<FloorResult>('done');
      child.send({ type: 'go' });
      return done;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
      if (child.connected) child.send({ type: 'exit' });
      else child.kill('SIGTERM');
      await exited;
      clearTimeout(force);
    },
  };
  return message<null>('ready').then(() => floor);
}

// ---------------------------------------------------------------- the floor's process

interface Claimed {
  id: string;
  account_id: string;
  webhook_id: string;
  event_id: string;
  event: string;
  attempt: number;
  url: string;
  secret: string; // as stored (sealed)
  active: boolean;
  body: string | null;
}

interface Outcome {
  row: Claimed;
  status: 'delivered' | 'pending' | 'dead' | 'failed';
  code: number | null;
  error: string | null;
  sent: boolean; // an attempt row is written only then
  startedAt: number;
  durationMs: number;
}

/** The envelope as text, built by PostgreSQL from the event row `e` (data is stored as JSON.stringify's text). */
const BODY = `'{"id":"'::text || e.id::text || '","event":' || to_json(e.event)::text || ',"created_at":"'
  || to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","account_id":"' || e.account_id::text
  || '","api_version":' || to_json(e.api_version)::text || ',"data":' || e.data::text || '}'`;

/**
 * Before a floor pass (outside its measurement): every event's body as the
 * floor builds it against the engine's (JSON.stringify of envelopeJson() as
 * pg parses it); a sentence when any differs.
 */
export async function checkBodies(sql: pg.Pool, accountId: string): Promise<string | null> {
  // Imported here: the floor's own process loads none of the service's code.
  const { envelopeJson } = await import('../src/platform/db/outbox.ts');
  const { rows } = await sql.query<{ id: string; envelope: object; body: string }>(
    `SELECT e.id, ${envelopeJson('e')} AS envelope, ${BODY} AS body FROM events e WHERE e.account_id = $1`,
    [accountId],
  );
  const differ = rows.filter((r) => JSON.stringify(r.envelope) !== r.body);
  return differ.length ? `${differ.length} of ${rows.length} bodies differ from the engine's, e.g. event ${differ[0].id}` : null;
}

const CLAIM = `WITH claimed AS (
    UPDATE webhook_deliveries SET attempt = attempt + 1, next_attempt_at = $1::timestamptz + make_interval(secs => $3), updated_at = now()
     WHERE id IN (SELECT d.id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.next_attempt_at <= $1::timestamptz
                   ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING id, account_id, webhook_id, event_id, event, attempt
  )
  SELECT c.*, s.url, s.secret, s.active, ${BODY} AS body
    FROM claimed c JOIN webhook_subscriptions s ON s.id = c.webhook_id LEFT JOIN events e ON e.id = c.event_id`;

const RECORD = `WITH o AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::text[], $6::int[]) AS o(id, attempt, status, code, error, delay)
  ), logged AS (
    INSERT INTO webhook_attempts (account_id, webhook_id, delivery_id, trigger, started_at, duration_ms, url, request_headers, response_status, error, outcome)
    SELECT a.account_id, a.webhook_id, a.id, 'automatic', to_timestamp(a.started / 1000), a.duration, a.url, '{}', a.code, a.error,
           coalesce(a.code::text, 'connection_error')
      FROM unnest($1::uuid[], $7::uuid[], $8::uuid[], $9::float8[], $10::int[], $11::text[], $4::int[], $5::text[], $12::bool[])
        AS a(id, account_id, webhook_id, started, duration, url, code, error, sent)
     WHERE a.sent
  )
  UPDATE webhook_deliveries w
     SET status = o.status, last_status_code = o.code, last_error = o.error,
         delivered_at = CASE WHEN o.status = 'delivered' THEN now() ELSE w.delivered_at END,
         next_attempt_at = CASE WHEN o.status = 'pending' THEN $13::timestamptz + make_interval(secs => o.delay) ELSE w.next_attempt_at END,
         updated_at = now()
    FROM o WHERE w.id = ANY($1::uuid[]) AND w.id = o.id AND w.attempt = o.attempt`;

interface Lane {
  active: number;
  queue: Claimed[];
  path: string;
  pool: Pool;
}

async function floorProcess(config: FloorConfig): Promise<void> {
  const connect = async () => {
    const client = new pg.Client({ connectionString: config.databaseUrl, application_name: 'merx-floor' });
    await client.connect();
    // As the engine's bookkeeping: a claim or outcome lost in a crash leaves the delivery due, sent again (at least once).
    await client.query('SET synchronous_commit = off');
    return client;
  };
  const [claimer, recorder] = await Promise.all([connect(), connect()]);
  const secureContext = tls.createSecureContext({ ca: fs.readFileSync(config.caFile) });
  const known = new Map(Object.entries(config.secrets));
  const opened = new Map<string, string>();
  const lanes = new Map<string, Lane>();
  const result: FloorResult = { claimed: 0, delivered: 0, failures: [] };

  // A lane per subscription and URL: a URL changed meanwhile gets a pool of its own.
  const laneOf = (row: Claimed): Lane => {
    let lane = lanes.get(`${row.webhook_id} ${row.url}`);
    if (!lane) {
      const url = new URL(row.url);
      const pool = new Pool(url.origin, {
        connections: LANE_WIDTH,
        pipelining: 1,
        allowH2: false,
        keepAliveTimeout: 30_000,
        connect: { secureContext, timeout: TIMEOUT_MS },
      });
      lane = { active: 0, queue: [], path: url.pathname + url.search, pool };
      lanes.set(`${row.webhook_id} ${row.url}`, lane);
    }
    return lane;
  };
  const secretOf = (row: Claimed): string | undefined => {
    let plain = opened.get(row.secret);
    if (plain === undefined) {
      plain = known.get(row.url);
      if (plain !== undefined) opened.set(row.secret, plain);
    }
    return plain;
  };

  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  process.send!({ type: 'ready', value: null });
  await go;

  let unsent = 0;
  let inFlight = 0;
  let claiming = false;
  let exhausted = false;
  let recording = false;
  const outcomes: Outcome[] = [];
  let finish!: () => void;
  let fail!: (err: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => ((finish = resolve), (fail = reject)));

  const settle = (row: Claimed, code: number | null, error: string | null, startedAt: number) => {
    const ok = code !== null && code >= 200 && code < 300;
    const status = ok ? 'delivered' : row.attempt >= MAX_ATTEMPTS ? 'dead' : 'pending';
    if (ok) result.delivered++;
    else if (result.failures.length < 5) result.failures.push(`${row.id}: ${error}`);
    const durationMs = Math.round(performance.timeOrigin + performance.now() - startedAt);
    outcomes.push({ row, status, code, error, sent: true, startedAt, durationMs });
    record();
  };

  const send = (lane: Lane, row: Claimed) => {
    const secret = secretOf(row)!;
    const body = row.body!;
    const t = Math.floor(Date.now() / 1000);
    const startedAt = performance.timeOrigin + performance.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'merx-webhooks/1',
      'x-merx-event': row.event,
      'x-merx-event-id': row.event_id,
      'x-merx-delivery': crypto.randomUUID(),
      'x-merx-timestamp': String(t),
      'x-merx-signature': `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`,
      'webhook-id': row.event_id,
      'webhook-timestamp': String(t),
      'webhook-signature': `v1,${crypto.createHmac('sha256', secret).update(`${row.event_id}.${t}.`).update(body).digest('base64')}`,
    };
    let code: number | null = null;
    let done = false;
    const end = (error: string | null) => {
      if (done) return;
      done = true;
      lane.active--;
      inFlight--;
      settle(row, code, error ?? (code !== null && (code < 200 || code >= 300) ? `HTTP ${code}` : null), startedAt);
      pump(lane);
    };
    lane.pool.dispatch(
      { path: lane.path, method: 'POST', headers, body, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS },
      {
        onRequestStart() {},
        onResponseStart(_controller, statusCode) {
          if (statusCode >= 200) code = statusCode;
        },
        onResponseData() {},
        onResponseEnd: () => end(null),
        onResponseError: (_controller, err) => end(`connection: ${err.message}`),
      },
    );
  };

  const pump = (lane: Lane) => {
    while (lane.active < LANE_WIDTH && lane.queue.length) {
      lane.active++;
      inFlight++;
      unsent--;
      send(lane, lane.queue.shift()!);
    }
    claim();
    check();
  };

  // The next batch is claimed while the lanes still have a batch's worth to send, not before: leases stay short.
  const claim = () => {
    if (claiming || exhausted || unsent >= CLAIM_BATCH) return;
    claiming = true;
    claimer.query<Claimed>(CLAIM, [config.now, CLAIM_BATCH, LEASE_SEC]).then(({ rows }) => {
      claiming = false;
      result.claimed += rows.length;
      if (rows.length === 0) exhausted = true;
      const touched = new Set<Lane>();
      for (const row of rows) {
        const problem =
          (!row.active && 'subscription is inactive') || (row.body === null && 'event no longer exists') || (!secretOf(row) && 'secret unknown');
        if (problem) {
          outcomes.push({ row, status: 'failed', code: null, error: problem, sent: false, startedAt: Date.now(), durationMs: 0 });
          if (result.failures.length < 5) result.failures.push(`${row.id}: ${problem}`);
          continue;
        }
        const lane = laneOf(row);
        lane.queue.push(row);
        unsent++;
        touched.add(lane);
      }
      record();
      for (const lane of touched) pump(lane);
      claim();
      check();
    }, fail);
  };

  const record = () => {
    if (recording || outcomes.length === 0) return;
    recording = true;
    const batch = outcomes.splice(0, RECORD_BATCH);
    const column = <T>(f: (o: Outcome) => T) => batch.map(f);
    recorder
      .query(RECORD, [
        column((o) => o.row.id),
        column((o) => o.row.attempt),
        column((o) => o.status),
        column((o) => o.code),
        column((o) => o.error),
        column((o) => BACKOFF_SEC[Math.min(o.row.attempt, BACKOFF_SEC.length) - 1] ?? 0),
        column((o) => o.row.account_id),
        column((o) => o.row.webhook_id),
        column((o) => o.startedAt),
        column((o) => o.durationMs),
        column((o) => o.row.url),
        column((o) => o.sent),
        config.now,
      ])
      .then(() => {
        recording = false;
        record();
        check();
      }, fail);
  };

  const check = () => {
    if (exhausted && !claiming && unsent === 0 && inFlight === 0 && !recording && outcomes.length === 0) finish();
  };

  claim();
  try {
    await finished;
    process.send!({ type: 'done', value: result });
  } catch (err) {
    process.send!({ type: 'failed', value: err instanceof Error ? err.message : String(err) });
  }
  // Connections stay open until the bench has read their CPU time (a backend that exits takes its count with it).
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  await Promise.allSettled([...[...lanes.values()].map((l) => l.pool.close()), claimer.end(), recorder.end()]);
  process.exit(0);
}

if (import.meta.main && process.env.MERX_FLOOR_CONFIG) {
  // The bench gone (Ctrl-C), nothing is left to report to.
  process.on('disconnect', () => process.exit(1));
  try {
    await floorProcess(JSON.parse(process.env.MERX_FLOOR_CONFIG) as FloorConfig);
  } catch (err) {
    process.send?.({ type: 'failed', value: err instanceof Error ? (err.stack ?? err.message) : String(err) }, () => process.exit(1));
  }
}
