// The API side of bench/read-path.ts: a load generator against the service
// child, every answer 2xx or the run fails, latencies of the answered
// requests, and the service process's and the client's CPU per answered
// request. The client is wrk (C, like pgbench on the other side) when it is
// installed; autocannon sends what wrk cannot replay from a list (PATCH,
// each request depending on the ones before) and everything when
// BENCH_HTTP_CLIENT=autocannon.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { childCpuMs, pidJiffies } from './cpu.ts';

export interface Side {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests answered 2xx (API) or transactions run (pgbench). */
  answered?: number;
  /** The service process's CPU (user + system) per answered request: the API sides only. */
  serviceCpuMs?: number;
  /** The load generator's own CPU per answered request (wrk or pgbench: the client shares the machine's cores). */
  clientCpuMs?: number;
}

export interface HttpRequest {
  path: string;
  body?: string;
}

export interface HttpLoad {
  method: 'GET' | 'POST' | 'PATCH';
  /** Called once per request: a PATCH load picks the next order and the status to flip it to. */
  next: () => HttpRequest;
  headers?: Record<string, string>;
  /** Each request depends on the answers before it (a status flip): sent by autocannon, never replayed from a list. */
  stateful?: true;
}

export const MCP_VERSION = '2025-06-18';
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_VERSION };
export const JSON_HEADERS = { 'content-type': 'application/json' };

export function percentile(sorted: Float64Array, p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

const WRK = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find((p) => fs.existsSync(p));

/** The client that sends a load that can be replayed: what a results section names. */
export function httpClient(): 'wrk' | 'autocannon' {
  return WRK && process.env.BENCH_HTTP_CLIENT !== 'autocannon' ? 'wrk' : 'autocannon';
}

/** `load` sent to `service` for `seconds` over `connections`, each request with the next of the keys. */
type HttpRunner = (
  service: { url: string; pid: number },
  load: HttpLoad,
  nextKey: () => string,
  seconds: number,
  connections: number,
) => Promise<Side>;

export const runHttp: HttpRunner = (...args) => (httpClient() === 'wrk' && !args[1].stateful ? runWrk : runAutocannon)(...args);

/** As many requests as wrk cycles through: the first ones autocannon would send, keys and paths each round-robin. */
const WRK_REQUESTS = 10_000;

/**
 * wrk replays a list of raw requests, made once here from `load.next()` and
 * `nextKey()` (its Lua hooks then only pick the next string), so its threads
 * spend their time on the sockets, as pgbench's do.
 */
const runWrk: HttpRunner = async (service, load, nextKey, seconds, connections) => {
  const { host } = new URL(service.url);
  const requests: string[] = [];
  for (let i = 0; i < WRK_REQUESTS; i++) {
    const next = load.next();
    const headers = {
      host,
      ...load.headers,
      authorization: `Bearer ${nextKey()}`,
      ...(next.body !== undefined ? { 'content-length': String(Buffer.byteLength(next.body)) } : {}),
    };
    requests.push(
      `${load.method} ${next.path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n${next.body ?? ''}`,
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-wrk-'));
  const script = path.join(dir, 'load.lua');
  // JSON string literals are Lua string literals too while they hold only ASCII (\r, \n, \" and \\ escapes).
  fs.writeFileSync(
    script,
    `local requests = {${requests.map((r) => JSON.stringify(r)).join(',\n')}}
local count, i = #requests, 0
local threads = 0
function setup(thread) thread:set("start", threads * 997) threads = threads + 1 end
function init() i = start or 0 end
function request() i = i % count + 1 return requests[i] end
function done(summary, latency)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout, latency:percentile(50), latency:percentile(99)))
end
`,
  );
  const threads = Math.min(connections, os.availableParallelism());
  const cpuBefore = pidJiffies(service.pid);
  try {
    // bash's `times` prints the CPU its children used: wrk's own, exact, after it exits.
    const { stdout, stderr } = await run('bash', [
      '-c',
      'wrk "$@" && times >&2',
      'wrk',
      '-t',
      String(threads),
      '-c',
      String(connections),
      '-d',
      `${seconds}s`,
      '--timeout',
      '30s',
      '-s',
      script,
      service.url,
    ]);
    const cpuAfter = pidJiffies(service.pid);
    // done()'s line, among wrk's own summary lines.
    const result = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"requests"'))!) as Record<string, number>;
    const failed = result.status + result.connect + result.read + result.write + result.timeout;
    if (failed) throw new Error(`wrk: ${result.status} non-2xx answers, ${failed - result.status} connection errors`);
    const clientCpuMs = childCpuMs(stderr);
    return {
      reqPerSec: result.requests / (result.durationUs / 1e6),
      p50Ms: result.p50Us / 1000,
      p99Ms: result.p99Us / 1000,
      answered: result.requests,
      serviceCpuMs: cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 10) / result.requests : undefined,
      clientCpuMs: clientCpuMs === null ? undefined : clientCpuMs / result.requests,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

/** Runs a command to its end: its output, or why it failed. */
function run(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

const runAutocannon: HttpRunner = (service, load, nextKey, seconds, connections) => {
  const latencies: number[] = [];
  let failures = 0;
  const cpuBefore = pidJiffies(service.pid);
  // autocannon runs in this process: its CPU is this process's (the bench's own work here is idle while it runs).
  const clientBefore = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: service.url,
        connections,
        duration: seconds,
        timeout: 30,
        requests: [
          {
            method: load.method,
            setupRequest: (request) => {
              const next = load.next();
              return {
                ...request,
                path: next.path,
                ...(next.body !== undefined ? { body: next.body } : {}),
                headers: { ...request.headers, ...load.headers, authorization: `Bearer ${nextKey()}` },
              };
            },
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        if (failures || result.errors) return reject(new Error(`${failures} non-2xx answers, ${result.errors} connection errors`));
        const sorted = Float64Array.from(latencies).sort();
        const elapsed = (result.finish.getTime() - result.start.getTime()) / 1000;
        const cpuAfter = pidJiffies(service.pid);
        // Jiffies are 10 ms: ~8,000 requests in a round make the figure good to a few microseconds.
        const serviceCpuMs = cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 10) / sorted.length : undefined;
        const client = process.cpuUsage(clientBefore);
        const clientCpuMs = (client.user + client.system) / 1000 / sorted.length;
        resolve({
          reqPerSec: sorted.length / elapsed,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          answered: sorted.length,
          serviceCpuMs,
          clientCpuMs,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => (status >= 200 && status < 300 ? latencies.push(ms) : failures++));
  });
};
