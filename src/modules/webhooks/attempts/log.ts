// The attempt log (EXTENSIONS 6): one row per attempt of a delivery, whatever
// made it (automatic, retry, recovery, test), with the request headers as sent
// and the answer, bounded: at most 20 response headers of 200 characters each
// and 1000 characters of body (delivery/https-sender.ts cuts the answer). Rows are written in
// the statement or transaction that records the attempt's outcome
// (delivery/outcomes.ts, delivery/engine.ts, recovery/recoveries.ts): routine outcomes in their batch,
// so the log adds no round trip to the fan-out.
import type { Sql } from '../../../platform/db/db.ts';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome } from '../delivery/https-sender.ts';

/** What made an attempt: the automatic schedule, the retry endpoint, a recovery, or the test endpoint. */
export const ATTEMPT_TRIGGERS = ['automatic', 'retry', 'recovery', 'test'] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

const TLS_CODE = /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|HOSTNAME|ALTNAME/i;

/**
 * What the attempt came to, for the health outcomes (`outcome`: the status
 * code as text, or timeout, connection_error, tls_error, dns_error,
 * policy_refused, not_sent) and one English sentence for the log (null when
 * an answer came back that is not a redirect: its status says it).
 */
export function describeOutcome(outcome: AttemptOutcome): { outcome: string; error: string | null } {
  const code = outcome.statusCode;
  const error = outcome.error ?? '';
  if (code !== null) {
    if (code >= 300 && code < 400) return { outcome: String(code), error: `The endpoint answered with a redirect (${code}), which is not followed.` };
    if (error.startsWith('response:'))
      return { outcome: String(code), error: `The connection broke while the answer was read (${error.slice(10)}).` };
    return { outcome: String(code), error: null };
  }
  if (error.startsWith('timeout'))
    return { outcome: 'timeout', error: `The endpoint did not answer within ${ATTEMPT_TIMEOUT_MS / 1000} s (timeout).` };
  const refused = /^url refused by policy: (.*)$/.exec(error);
  if (refused) {
    if (/dns_failed/.test(refused[1])) return { outcome: 'dns_error', error: `The host name could not be resolved (DNS): ${refused[1]}.` };
    return { outcome: 'policy_refused', error: `The URL was refused by the policy: ${refused[1]}.` };
  }
  if (error.startsWith('connection:')) {
    const sysCode = outcome.errorCode ?? /\(([A-Z0-9_]+)\)$/.exec(error)?.[1] ?? '';
    if (sysCode === 'ECONNREFUSED') return { outcome: 'connection_error', error: 'The connection was refused (ECONNREFUSED).' };
    if (sysCode === 'ENOTFOUND' || sysCode === 'EAI_AGAIN')
      return { outcome: 'dns_error', error: `The host name could not be resolved (DNS, ${sysCode}).` };
    if (TLS_CODE.test(sysCode) || /tls|certificate|ssl/i.test(error))
      return { outcome: 'tls_error', error: `The TLS handshake failed (${error.slice(12)}).` };
    return { outcome: 'connection_error', error: `The connection failed (${error.slice(12)}).` };
  }
  return { outcome: 'not_sent', error: `The attempt was not sent: ${error || 'unknown reason'}.` };
}

/** One attempt as stored. */
export interface AttemptRow {
  account_id: string;
  webhook_id: string;
  delivery_id: string;
  trigger: AttemptTrigger;
  started_at: string;
  duration_ms: number;
  url: string;
  request_headers: Record<string, string>;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  error: string | null;
  outcome: string;
}

/** When an attempt began: its started_at, and where its duration is counted from. */
export interface AttemptStart {
  at: Date;
  ms: number;
}
export const attemptStart = (): AttemptStart => ({ at: new Date(), ms: performance.now() });

export function attemptRow(
  delivery: { account_id: string; webhook_id: string; id: string; url: string },
  outcome: AttemptOutcome,
  trigger: AttemptTrigger,
  startedAt: Date,
  durationMs: number,
): AttemptRow {
  const described = describeOutcome(outcome);
  return {
    account_id: delivery.account_id,
    webhook_id: delivery.webhook_id,
    delivery_id: delivery.id,
    trigger,
    started_at: startedAt.toISOString(),
    duration_ms: Math.max(0, Math.round(durationMs)),
    url: delivery.url,
    request_headers: outcome.requestHeaders ?? {},
    response_status: outcome.statusCode,
    response_headers: outcome.statusCode === null ? null : (outcome.responseHeaders ?? {}),
    response_body: outcome.statusCode === null ? null : outcome.responseBody,
    error: described.error,
    outcome: described.outcome,
  };
}

/** The column list and the json_to_recordset shape the inserts share. */
export const ATTEMPT_COLUMNS =
  'account_id, webhook_id, delivery_id, trigger, started_at, duration_ms, url, request_headers, response_status, response_headers, response_body, error, outcome';
export const ATTEMPT_RECORD = `account_id uuid, webhook_id uuid, delivery_id uuid, trigger text, started_at timestamptz, duration_ms int, url text,
  request_headers jsonb, response_status int, response_headers jsonb, response_body text, error text, outcome text`;

/** Inserts attempts (a statement of its own, or inside the transaction that records their outcome). */
export async function insertAttempts(sql: Sql, rows: AttemptRow[]): Promise<void> {
  if (!rows.length) return;
  await sql.query(
    `INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS}) SELECT ${ATTEMPT_COLUMNS} FROM json_to_recordset($1::json) AS a(${ATTEMPT_RECORD})`,
    [JSON.stringify(rows)],
  );
}
