// Issue 38's failover drill: Merx (a child process, WORKERS=1) on the drill
// cluster (cluster.ts), DATABASE_URL at HAProxy's write port and
// DATABASE_READ_URLS at its read port, under 50 idempotent PATCH/s, 10 reads/s
// and webhook deliveries to an HTTPS receiver. The leader's postmaster is
// killed with SIGKILL; 30 s later a planned `patronictl switchover` follows.
// A write is retried with its own Idempotency-Key for up to 20 s, as a
// careful client does. Then every acknowledged write must have exactly its one
// event, and every event must have reached the receiver.
import crypto from 'node:crypto';
import pg from 'pg';
import { operator } from '../../test/helpers/harness.ts';
import { startHttpsReceiver } from '../../test/helpers/https-receiver.ts';
import { sql } from '../../test/helpers/own-cluster.ts';
import { freePort, killHard, startServiceChild } from '../../test/helpers/service-child.ts';
import { createWebhook, runDeliveryJob } from '../../test/helpers/webhooks.ts';
import { startDrillCluster } from './cluster.ts';

const WRITES_PER_SEC = 50;
const READS_PER_SEC = 10;
const RETRY_FOR_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Attempt {
  at: number;
  ms: number;
  status: number;
  /** The 503's Retry-After, or the 409's reason. */
  note: string;
  /** What a refusal said. */
  detail?: string;
}

interface Write {
  key: string;
  orderId: string;
  note: string;
  startedAt: number;
  attempts: Attempt[];
  acked: boolean;
  gaveUp: string | null;
}

export interface ScenarioFigures {
  name: string;
  /** When the cluster was struck, ms since the drill's load began. */
  at: number;
  /** From the strike to the first new write that succeeded after the last new one refused (0: none was refused). */
  writesBackMs: number;
  /** From the strike to HAProxy's write port reaching a primary again (null: it never stopped). */
  routedMs: number | null;
  writesRefused: number;
  /** Reads sent between the strike and the writes' return (at least the first second). */
  readsInGap: number;
  readsOkInGap: number;
  /** Reads answered neither 2xx nor 503 with Retry-After. */
  badReads: number;
  /** The refused reads in the gap: when (ms after the strike), status, what it said. */
  refusedReads: string[];
  /** The last few refused new writes before writes came back. */
  lastRefusedWrites: string[];
}

export interface DrillFigures {
  scenarios: ScenarioFigures[];
  processExited: boolean;
  writes: number;
  acked: number;
  /** Writes whose 20 s of retries ended on a key still in use. */
  gaveUpOnKeyInUse: number;
  gaveUpOther: number;
  lost: number;
  doubled: number;
  events: number;
  delivered: number;
  /** Answers that broke the contract (neither 2xx, 4xx, nor 503 with Retry-After). */
  badAnswers: string[];
}

export async function runFailoverDrill(
  options: { log?: (line: string) => void; afterKillMs?: number; afterSwitchoverMs?: number } = {},
): Promise<DrillFigures> {
  const log = options.log ?? (() => {});
  const cluster = await startDrillCluster(log);
  const receiver = await startHttpsReceiver();
  const child = await startServiceChild(
    await freePort(),
    {
      DATABASE_URL: cluster.writeUrl,
      DATABASE_READ_URLS: cluster.readUrl,
      WORKERS: '1',
      LOG_LEVEL: 'info',
      DEPLOY_SHA: 'failover000',
      RATE_LIMIT_REST_PER_MINUTE: '1000000',
    },
    receiver.caFile,
  );
  const exited = () => child.process.exitCode !== null || child.process.signalCode !== null;
  try {
    log(`cluster in ${cluster.dir}; Merx at ${child.url}`);
    const op = operator(child.url);
    const account = await op.createAccount();
    const key = await op.issueKey(account.id);
    const endpoint = receiver.endpoint('failover');
    endpoint.script([], { status: 200, body: 'ok' });
    await createWebhook(child.url, key, { url: endpoint.url, events: ['order.updated'] });
    const orders: Array<{ id: string }> = [];
    for (let i = 0; i < 10; i++) orders.push(await op.checkout(account.id));

    const t0 = Date.now();
    const writes: Write[] = [];
    const reads: Attempt[] = [];
    const badAnswers: string[] = [];
    const request = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Attempt> => {
      const at = Date.now() - t0;
      try {
        const res = await fetch(child.url + path, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        let note = '';
        if (res.status === 503) note = res.headers.get('retry-after') ?? '';
        if (res.status === 409) note = JSON.parse(text).error?.details?.reason ?? '';
        const fine = res.status < 300 || (res.status >= 400 && res.status < 500) || (res.status === 503 && Number(note) > 0);
        if (!fine) badAnswers.push(`${method} ${path}: ${res.status} ${text.slice(0, 160)}`);
        return { at, ms: Date.now() - t0 - at, status: res.status, note, ...(res.status >= 300 ? { detail: text.slice(0, 160) } : {}) };
      } catch (err) {
        if (!exited()) badAnswers.push(`${method} ${path}: no answer (${(err as Error).message})`);
        return { at, ms: Date.now() - t0 - at, status: 0, note: (err as Error).message };
      }
    };
    const write = async (w: Write) => {
      for (;;) {
        const attempt = await request('PATCH', `/api/v1/orders/${w.orderId}`, { 'idempotency-key': w.key }, { admin_notes: w.note });
        w.attempts.push(attempt);
        if (attempt.status === 200) return void (w.acked = true);
        const retryable = attempt.status === 0 || attempt.status === 503 || (attempt.status === 409 && attempt.note === 'idempotency_key_in_use');
        if (!retryable || Date.now() - t0 - w.startedAt > RETRY_FOR_MS) return void (w.gaveUp = `${attempt.status} ${attempt.note}`);
        await sleep(attempt.status === 503 ? Math.min(Number(attempt.note) * 1000, 1000) : 250);
      }
    };
    let running = true;
    const inFlight = new Set<Promise<void>>();
    const track = (p: Promise<void>) => {
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    };
    const writer = setInterval(() => {
      if (!running) return;
      const w: Write = {
        key: crypto.randomUUID(),
        orderId: orders[writes.length % orders.length].id,
        note: `drill ${crypto.randomUUID()}`,
        startedAt: Date.now() - t0,
        attempts: [],
        acked: false,
        gaveUp: null,
      };
      writes.push(w);
      track(write(w));
    }, 1000 / WRITES_PER_SEC);
    let readNo = 0;
    const reader = setInterval(() => {
      if (!running) return;
      const n = readNo++;
      track(request('GET', n % 2 ? `/api/v1/orders/${orders[n % orders.length].id}` : '/api/v1/orders?limit=10').then((a) => void reads.push(a)));
    }, 1000 / READS_PER_SEC);

    // When HAProxy's write port reaches a primary again: a probe of the drill's own every 100 ms.
    const primaryReachable: number[] = [];
    const prober = (async () => {
      while (running) {
        const at = Date.now() - t0;
        const client = new pg.Client({ connectionString: cluster.writeUrl, connectionTimeoutMillis: 500 });
        client.on('error', () => {});
        try {
          await client.connect();
          const {
            rows: [row],
          } = await client.query('SELECT pg_is_in_recovery() AS standby');
          if (!row.standby) primaryReachable.push(at);
        } catch {
          // not yet
        } finally {
          await client.end().catch(() => {});
        }
        await sleep(100);
      }
    })();
    const strikes: Array<{ name: string; at: number }> = [];
    await sleep(8_000);
    const killed = await cluster.killLeaderPostmaster();
    strikes.push({ name: `SIGKILL to the leader's postmaster (${killed.name})`, at: Date.now() - t0 });
    await sleep(options.afterKillMs ?? 30_000);
    await cluster.waitHealthy(60_000);
    strikes.push({ name: 'patronictl switchover', at: Date.now() - t0 });
    const leader = await cluster.switchover();
    log(`${leader} leads`);
    await sleep(options.afterSwitchoverMs ?? 20_000);
    running = false;
    clearInterval(writer);
    clearInterval(reader);
    await Promise.all([...inFlight]);
    await prober;

    const scenarios = strikes.map((strike, i): ScenarioFigures => {
      const end = strikes[i + 1]?.at ?? Infinity;
      // New writes (each one's first attempt): a retry's 409 for its key still in use is counted apart (gaveUpOnKeyInUse).
      const attempts = writes
        .map((w) => w.attempts[0])
        .filter((a) => a && a.at >= strike.at && a.at < end)
        .sort((a, b) => a.at - b.at);
      const refused = attempts.filter((a) => a.status !== 200);
      const lastRefused = refused.at(-1);
      const firstOk = lastRefused ? attempts.find((a) => a.at > lastRefused.at && a.status === 200) : null;
      const writesBackMs = lastRefused ? (firstOk ? firstOk.at + firstOk.ms - strike.at : end - strike.at) : 0;
      // The first probe that reached a primary after the probes' gap (they succeed every ~100 ms while one is routed).
      const reached = primaryReachable.filter((at) => at >= strike.at && at < end);
      const back = reached.find((at, j) => (j === 0 ? at - strike.at : at - reached[j - 1]) > 250);
      const routedMs = back === undefined ? null : back - strike.at;
      const gapEnd = strike.at + Math.max(writesBackMs, 1000);
      const inGap = reads.filter((r) => r.at >= strike.at && r.at < gapEnd);
      return {
        name: strike.name,
        at: strike.at,
        writesBackMs,
        routedMs,
        writesRefused: refused.length,
        readsInGap: inGap.length,
        readsOkInGap: inGap.filter((r) => r.status >= 200 && r.status < 300).length,
        badReads: inGap.filter((r) => !(r.status < 300 || (r.status === 503 && Number(r.note) > 0))).length,
        lastRefusedWrites: refused.slice(-5).map((r) => `+${r.at - strike.at} ms (${r.ms} ms): ${r.status} ${r.detail ?? r.note}`),
        refusedReads: inGap
          .filter((r) => r.status >= 300 || r.status === 0)
          .map((r) => `+${r.at - strike.at} ms (${r.ms} ms): ${r.status} ${r.detail ?? r.note}`),
      };
    });

    // Whatever was not acknowledged is sent again with its key until it is: a replay where it had committed.
    for (const w of writes.filter((x) => !x.acked)) {
      for (let i = 0; i < 120 && !w.acked; i++) {
        const attempt = await request('PATCH', `/api/v1/orders/${w.orderId}`, { 'idempotency-key': w.key }, { admin_notes: w.note });
        if (attempt.status === 200) w.acked = true;
        else await sleep(500);
      }
    }
    const events = await sql<{ id: string; note: string }>(
      cluster.writeUrl,
      "SELECT id, data->'order'->>'admin_notes' AS note FROM events WHERE account_id = $1 AND event = 'order.updated'",
      [account.id],
    );
    const perNote = new Map<string, number>();
    for (const e of events) perNote.set(e.note, (perNote.get(e.note) ?? 0) + 1);
    const ackedFirstTime = writes.filter((w) => w.gaveUp === null);
    // Every event delivered: the receiver's own record, after the retries' backoff is run through by the job.
    const received = () =>
      new Set(endpoint.requests.filter((r) => r.reply && 'status' in r.reply && r.reply.status === 200).map((r) => JSON.parse(r.body).id as string));
    for (let pass = 0; pass < 20 && events.some((e) => !received().has(e.id)); pass++) {
      await runDeliveryJob(child.url, new Date(Date.now() + 13 * 3600_000)).catch(() => 0);
      await sleep(1000);
    }
    const got = received();
    // The service's own account of the outages, on the drill's clock.
    for (const line of child.stdout().split('\n')) {
      if (!/database|replica/.test(line)) continue;
      try {
        const entry = JSON.parse(line);
        log(`+${entry.time - t0} ms: ${entry.msg}${entry.down_sec ? ` (${entry.down_sec} s)` : ''}${entry.replica ? ` ${entry.replica}` : ''}`);
      } catch {
        // the banner
      }
    }
    return {
      scenarios,
      processExited: exited(),
      writes: writes.length,
      acked: ackedFirstTime.filter((w) => w.acked).length,
      gaveUpOnKeyInUse: writes.filter((w) => w.gaveUp?.includes('idempotency_key_in_use')).length,
      gaveUpOther: writes.filter((w) => w.gaveUp !== null && !w.gaveUp.includes('idempotency_key_in_use')).length,
      lost: writes.filter((w) => w.acked && (perNote.get(w.note) ?? 0) === 0).length,
      doubled: [...perNote.values()].filter((n) => n > 1).length,
      events: events.length,
      delivered: events.filter((e) => got.has(e.id)).length,
      badAnswers,
    };
  } finally {
    await killHard(child);
    await receiver.close();
    await cluster.close();
  }
}
