// Issue 28: what the service logs, and how. In a terminal a developer wants
// the start-up banner (operator token, demo key) to stay on screen, so the
// default there is quiet (warnings and errors) in a readable one-line form;
// anywhere else (a pipe, a file, a log collector) it is pino's JSON at info.
// LOG_FORMAT and LOG_LEVEL, when set, win over the guess.
import pino, { type Logger } from 'pino';
import type { Config } from '../../config.ts';
import { withoutConnectionErrors } from '../db/health.ts';

export type LogFormat = 'json' | 'pretty';

export interface LoggingChoice {
  format: LogFormat;
  level: string;
}

/** The format and level for a config and whether stdout is a terminal. */
export function decideLogging(config: Pick<Config, 'logFormat' | 'logLevel'>, stdoutIsTty: boolean): LoggingChoice {
  const format = config.logFormat ?? (stdoutIsTty ? 'pretty' : 'json');
  const level = config.logLevel ?? (format === 'pretty' ? 'warn' : 'info');
  return { format, level };
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'v']);

function inline(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  if (value && typeof value === 'object' && 'message' in value && typeof value.message === 'string') {
    return JSON.stringify((value as { message: string }).message); // an error: its message, not its stack
  }
  return JSON.stringify(value);
}

/** One pino JSON record as `12:04:05 WARN message key=value ...` (one line, whatever the record holds). */
export function prettyLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json);
  } catch {
    return json.trimEnd();
  }
  const time = new Date(typeof record.time === 'number' ? record.time : Date.now()).toISOString().slice(11, 19);
  const level = LEVEL_NAMES[record.level as number] ?? String(record.level);
  const fields = Object.entries(record)
    .filter(([k]) => !OMITTED.has(k))
    .map(([k, v]) => `${k}=${inline(v)}`);
  return [time, level.padEnd(5), String(record.msg ?? ''), ...fields].join(' ').replace(/\n/g, '\\n');
}

export function createLogger(config: Pick<Config, 'logFormat' | 'logLevel'>, stdoutIsTty = Boolean(process.stdout.isTTY)): Logger {
  const { format, level } = decideLogging(config, stdoutIsTty);
  const options = { level, redact: ['req.headers.authorization'], hooks: { logMethod: withoutConnectionErrors } };
  if (format === 'json') return pino(options);
  return pino(options, { write: (chunk: string) => void process.stdout.write(`${prettyLine(chunk)}\n`) });
}
