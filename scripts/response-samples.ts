// npm run samples:responses: the response samples of the public reference
// (issue 41: they were schema placeholders, "number": 0, "payment_status":
// "string"), recorded from a running service: every request sample sent as
// test/request-samples.test.ts sends it, its answer kept (lists cut to two
// rows) in src/transports/response-samples.json, which the OpenAPI document
// shows as each success's example. test/request-samples.test.ts fails when an
// operation has none or one no longer validates: run this again.
import fs from 'node:fs';
import { startTestService } from '../test/helpers/harness.ts';
import { sendEverySample } from '../test/helpers/sample-requests.ts';
import { RESPONSE_SAMPLES_FILE, SAMPLES_WRITTEN_FOR } from '../src/transports/response-samples.ts';

/** Lists cut to their first two rows: a sample shows the shape, not the page. */
const short = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.slice(0, 2).map(short)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, short(v)]))
      : value;

const svc = await startTestService({ PUBLIC_BASE_URL: SAMPLES_WRITTEN_FOR, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
try {
  const samples: Record<string, { status: number; body: unknown }> = {};
  for (const { operationId, res } of await sendEverySample(svc)) {
    if (res.status >= 300) throw new Error(`${operationId} answered ${res.status}: ${res.text}`);
    if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) continue;
    samples[operationId] = { status: res.status, body: short(res.body) };
  }
  fs.writeFileSync(RESPONSE_SAMPLES_FILE, `${JSON.stringify(samples, null, 2)}\n`);
  process.stdout.write(`${Object.keys(samples).length} response samples in ${RESPONSE_SAMPLES_FILE}\n`);
} finally {
  await svc.close();
}
