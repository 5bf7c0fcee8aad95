// EXTENSIONS 6 Health view: how an endpoint fared over the last hour and day,
// computed from its attempt log. Declared here, in one place (schema and
// read), to be converted to the platform's view declarations later.
import { Type } from 'typebox';
import type { Sql } from '../../../platform/db/db.ts';
import { Closed, Nullable, NullableDateTime, Uuid } from '../../../platform/contract/schema.ts';

const Window = Closed(
  {
    attempts: Type.Integer(),
    succeeded: Type.Integer({ description: 'Attempts answered 2xx.' }),
    failed: Type.Integer(),
    success_rate: Nullable('number', { minimum: 0, maximum: 1, description: 'succeeded / attempts; null without attempts.' }),
    latency_ms: Type.Union([Closed({ p50: Type.Number(), p99: Type.Number() }), Type.Null()], {
      description: 'Duration percentiles of the attempts that got an answer; null when none did.',
    }),
    outcomes: Type.Record(Type.String(), Type.Integer(), {
      description:
        'Attempts by outcome: the status code ("200", "404", ...), or timeout, connection_error, tls_error, dns_error, policy_refused, not_sent.',
    }),
  },
  { $id: 'WebhookHealthWindow' },
);

export const Health = Closed(
  {
    webhook_id: Uuid(),
    last_hour: Window,
    last_day: Window,
    consecutive_failures: Type.Integer({ description: 'Failed attempts since the last successful one (all of them when none succeeded).' }),
    last_success_at: NullableDateTime(),
    last_failure_at: NullableDateTime(),
    pending: Type.Integer({ description: 'Its deliveries now pending.' }),
    dead: Type.Integer({ description: 'Its deliveries now dead.' }),
  },
  { $id: 'WebhookHealth' },
);

type WindowRecord = {
  attempts: number;
  succeeded: number;
  failed: number;
  success_rate: number | null;
  latency_ms: { p50: number; p99: number } | null;
  outcomes: Record<string, number>;
};

const OK = 'response_status BETWEEN 200 AND 299';

async function window(sql: Sql, webhookId: string, hours: number): Promise<WindowRecord> {
  const { rows } = await sql.query<{ outcome: string; n: number }>(
    `SELECT outcome, count(*)::int AS n FROM webhook_attempts
      WHERE webhook_id = $1 AND started_at > now() - make_interval(hours => $2) GROUP BY outcome`,
    [webhookId, hours],
  );
  const latency = await sql.query<{ p50: number | null; p99: number | null }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::float8 AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms)::float8 AS p99
       FROM webhook_attempts WHERE webhook_id = $1 AND started_at > now() - make_interval(hours => $2) AND response_status IS NOT NULL`,
    [webhookId, hours],
  );
  const outcomes = Object.fromEntries(rows.map((r) => [r.outcome, r.n]));
  const attempts = rows.reduce((sum, r) => sum + r.n, 0);
  const succeeded = rows.filter((r) => /^2\d\d$/.test(r.outcome)).reduce((sum, r) => sum + r.n, 0);
  const { p50, p99 } = latency.rows[0] ?? { p50: null, p99: null };
  return {
    attempts,
    succeeded,
    failed: attempts - succeeded,
    success_rate: attempts ? succeeded / attempts : null,
    latency_ms: p50 === null || p99 === null ? null : { p50: Math.round(p50 * 10) / 10, p99: Math.round(p99 * 10) / 10 },
    outcomes,
  };
}

/** The subscription's health (the caller checked it is the account's). */
export async function readHealth(sql: Sql, accountId: string, webhookId: string) {
  const [lastHour, lastDay, marks, counts] = await Promise.all([
    window(sql, webhookId, 1),
    window(sql, webhookId, 24),
    sql.query<{ last_success_at: string | null; last_failure_at: string | null; consecutive_failures: number }>(
      `WITH s AS (SELECT max(started_at) AS at FROM webhook_attempts WHERE webhook_id = $1 AND ${OK}),
            f AS (SELECT max(started_at) AS at FROM webhook_attempts WHERE webhook_id = $1 AND NOT coalesce(${OK}, false))
       SELECT s.at AS last_success_at, f.at AS last_failure_at,
              (SELECT count(*)::int FROM webhook_attempts a WHERE a.webhook_id = $1 AND NOT coalesce(a.${OK}, false)
                  AND (s.at IS NULL OR a.started_at > s.at)) AS consecutive_failures
         FROM s, f`,
      [webhookId],
    ),
    sql.query<{ pending: number; dead: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE account_id = $2 AND webhook_id = $1 AND status = 'pending') AS pending,
              (SELECT count(*)::int FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'dead') AS dead`,
      [webhookId, accountId],
    ),
  ]);
  return { webhook_id: webhookId, last_hour: lastHour, last_day: lastDay, ...marks.rows[0], ...counts.rows[0] };
}
