// The recorded answers the public reference shows as response samples
// (scripts/response-samples.ts writes them from a running service; issue 41).
// They were recorded at npm start's address; a document for another base URL
// shows its own.
import fs from 'node:fs';
import path from 'node:path';

export const RESPONSE_SAMPLES_FILE = path.join(import.meta.dirname, 'response-samples.json');
export const SAMPLES_WRITTEN_FOR = 'http://localhost:3000';

type Recorded = Record<string, { status: number; body: unknown }>;

const recorded: Recorded = fs.existsSync(RESPONSE_SAMPLES_FILE) ? JSON.parse(fs.readFileSync(RESPONSE_SAMPLES_FILE, 'utf8')) : {};

/** The operation's recorded answer for `status`, in `serverUrl`'s addresses; undefined when none was recorded. */
export function responseSample(operationId: string, status: string, serverUrl: string): unknown {
  const sample = recorded[operationId];
  if (!sample || String(sample.status) !== status) return undefined;
  return JSON.parse(JSON.stringify(sample.body).replaceAll(SAMPLES_WRITTEN_FOR, serverUrl));
}
