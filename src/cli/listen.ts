// `npx merx listen --forward-to <url>` (issue 28), as `stripe listen`: follows
// the account's events feed (EXTENSIONS 1) with an API key and POSTs each
// envelope to a URL on the developer's machine, signed with both schemes a
// real delivery carries, with a secret printed at start. It is an HTTP client
// of the service: no database, and no URL policy to relax (the receiver is
// called from this machine, not from the service).
import crypto from 'node:crypto';
import { envelopeText } from '../platform/db/outbox.ts';
import { signatureHeaders, standardSecretOf } from '../modules/webhooks/signing/signature.ts';

export interface ListenOptions {
  forwardTo: string;
  baseUrl: string;
  key: string;
  /** Event names (the feed's `type`); all the key can see when empty. */
  events: string[];
  /** Replay from this instant (the feed's `since`); from the start of listening when absent. */
  since?: string;
  /** Signing secret; a fresh one (64 hex characters, like a subscription's) when absent. */
  secret?: string;
  /** The first wait after a page with nothing new; it doubles while the feed stays idle, up to maxIdleMs. */
  pollMs?: number;
  maxIdleMs?: number;
  /** Where baseUrl came from, for the first line (e.g. "--base-url", "MERX_BASE_URL"). */
  baseUrlFrom?: string;
  /** Attempts per event before moving on. */
  attempts?: number;
  retryDelayMs?: number;
  print?: (line: string) => void;
  signal?: AbortSignal;
}

const RECEIVER_TIMEOUT_MS = 10_000;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export class ListenError extends Error {}

/** Why a fetch failed, in a word where Node gives one (ECONNREFUSED), from its cause or the first of several. */
function reasonOf(err: unknown): string {
  if ((err as Error).name === 'TimeoutError') return 'no answer in time';
  const cause = (err as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
  return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (err as Error).message;
}

function checkedUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ListenError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ListenError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/$/, '');
}

interface FeedPage {
  data: Array<Record<string, unknown> & { id: string; event: string }>;
  has_more: boolean;
  next_cursor: string | null;
}

/** What the receiver said to one POST: its status, or why there was none. */
type Answer = { status: number; ms: number } | { error: string; ms: number };

export async function listen(options: ListenOptions): Promise<void> {
  const print = options.print ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const forwardTo = checkedUrl(options.forwardTo, '--forward-to');
  const base = checkedUrl(options.baseUrl, '--base-url');
  if (!options.key) throw new ListenError('an API key is needed: --key merx_... or MERX_API_KEY');
  const secret = options.secret ?? crypto.randomBytes(32).toString('hex');
  const since = options.since ?? new Date().toISOString();
  const attempts = options.attempts ?? 4;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  // Issue 41: each poll is a request log entry; an idle feed is polled ever less often (1, 2, 4, 8, then every
  // 10 s), and at once again after a page that had events.
  const pollMs = options.pollMs ?? 1000;
  const maxIdleMs = options.maxIdleMs ?? 10_000;

  const query = (cursor: string | null) => {
    const params = new URLSearchParams({ limit: '200', since });
    if (options.events.length) params.set('type', options.events.join(','));
    if (cursor) params.set('cursor', cursor);
    return `${base}/api/v1/events?${params}`;
  };

  async function readPage(cursor: string | null): Promise<FeedPage> {
    const res = await fetch(query(cursor), { headers: { authorization: `Bearer ${options.key}` }, signal: options.signal });
    const text = await res.text();
    if (res.ok) return JSON.parse(text) as FeedPage;
    let message = text;
    try {
      message = JSON.parse(text).error.message;
    } catch {
      // not an error body of the API: show it as it came
    }
    throw Object.assign(new ListenError(`GET ${base}/api/v1/events: ${res.status} ${message}`), { status: res.status });
  }

  async function post(rawBody: string, event: { id: string; event: string }): Promise<Answer> {
    const started = performance.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'merx-webhooks/1 (merx listen)',
      'x-merx-event': event.event,
      'x-merx-event-id': event.id,
      'x-merx-delivery': crypto.randomUUID(),
      ...signatureHeaders({ rawBody, eventId: event.id, timestampSec: Math.floor(Date.now() / 1000), secrets: [secret] }),
    };
    try {
      const res = await fetch(forwardTo, {
        method: 'POST',
        headers,
        body: rawBody,
        signal: AbortSignal.timeout(RECEIVER_TIMEOUT_MS),
        redirect: 'manual',
      });
      await res.arrayBuffer();
      return { status: res.status, ms: Math.round(performance.now() - started) };
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${RECEIVER_TIMEOUT_MS / 1000} s` : reasonOf(err);
      return { error: why, ms: Math.round(performance.now() - started) };
    }
  }

  async function forward(event: FeedPage['data'][number]): Promise<void> {
    // The body a real delivery sends: the envelope serialised by the same function (src/platform/db/outbox.ts).
    const rawBody = envelopeText(event);
    const stamp = () => new Date().toISOString().slice(11, 19);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const answer = await post(rawBody, event);
      if ('status' in answer) {
        const verdict = answer.status >= 200 && answer.status < 300 ? '' : '  (not 2xx: a real delivery would be retried)';
        print(`${stamp()}  ${event.event.padEnd(24)} ${event.id}  <-- ${answer.status} (${answer.ms} ms)${verdict}`);
        return;
      }
      const last = attempt === attempts;
      print(
        `${stamp()}  ${event.event.padEnd(24)} ${event.id}  receiver down at ${forwardTo} (${answer.error})` +
          (last ? `; gave up after ${attempts} attempts, moving on` : `; retry ${attempt}/${attempts - 1} in ${(retryDelayMs * attempt) / 1000} s`),
      );
      if (!last) await sleep(retryDelayMs * attempt, options.signal);
      if (options.signal?.aborted) return;
    }
  }

  print(
    `Following ${base}/api/v1/events${options.baseUrlFrom ? ` (the base URL from ${options.baseUrlFrom})` : ''}: ` +
      `${options.since ? `since ${options.since}` : 'from now'}; ${options.events.length ? options.events.join(', ') : 'every event the key can see'}`,
  );
  // Issue 41: "Ready." only once the service has answered this key; a first page that cannot be read stops here.
  let first: FeedPage;
  try {
    first = await readPage(null);
  } catch (err) {
    if (err instanceof ListenError) throw err;
    throw new ListenError(
      `cannot reach Merx at ${base} (${reasonOf(err)}): is it running? Pass --base-url (or MERX_BASE_URL) to follow another address`,
    );
  }
  print(`Forwarding each event to ${forwardTo}, signed as a Merx webhook with:`);
  print(`  secret (X-Merx-Signature, merx-client/webhooks)   ${secret}`);
  print(`  standard secret (webhook-signature, standardwebhooks) ${standardSecretOf(secret)}`);
  print('Ready. Ctrl-C stops.');

  let cursor: string | null = null;
  let serviceDown = false;
  let idleMs = pollMs;
  let pending: FeedPage | null = first;
  while (!options.signal?.aborted) {
    let page: FeedPage;
    try {
      page = pending ?? (await readPage(cursor));
      pending = null;
    } catch (err) {
      if (options.signal?.aborted) return;
      const status = (err as { status?: number }).status;
      // A key or a filter the service refuses will not get better by polling again.
      if (status !== undefined && status < 500 && status !== 429) throw err;
      if (!serviceDown) print(`Merx at ${base} is not answering (${status ?? reasonOf(err)}); polling on`);
      serviceDown = true;
      await sleep(pollMs * 2, options.signal);
      continue;
    }
    if (serviceDown) print(`Merx at ${base} answers again`);
    serviceDown = false;
    for (const event of page.data) {
      if (options.signal?.aborted) return;
      await forward(event);
    }
    // EXTENSIONS 1: next_cursor stays non-null past the last page; a page with nothing newer gives back the cursor it was given.
    cursor = page.next_cursor ?? cursor;
    if (page.has_more) continue;
    idleMs = page.data.length ? pollMs : Math.min(idleMs * 2, maxIdleMs);
    await sleep(page.data.length ? pollMs : idleMs, options.signal);
  }
}
