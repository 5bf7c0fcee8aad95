// The service under test runs as a child process (node src/main.ts), so the
// load generator never shares its event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface ServiceProcess {
  url: string;
  pid: number;
  /** Why the child ended (exit code or signal) and its last output, or null while it runs. */
  death(): string | null;
  stop(): Promise<void>;
}

const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const READY_TIMEOUT_MS = 60_000;

/** `main`: another checkout's src/main.ts (a before/after run); `env`: extra settings (raised limits). */
export function startServiceProcess(
  databaseUrl: string,
  adminToken: string,
  options: { main?: string; env?: Record<string, string> } = {},
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [options.main ?? MAIN], {
    env: {
      ...process.env,
      ...options.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      SEED_DEMO: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > 20_000) output = output.slice(-20_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`service did not start within ${READY_TIMEOUT_MS} ms:\n${output}`)), READY_TIMEOUT_MS);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    const onExit = (code: number | null) => fail(new Error(`service exited with ${code} before it was ready:\n${output}`));
    child.once('exit', onExit);
    const watch = () => {
      // main.ts prints "API  http://127.0.0.1:<port>/api/v1" once it listens (PORT=0 picks a free port).
      const match = /API\s+(http:\/\/\S+)\/api\/v1/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', watch);
      child.off('exit', onExit);
      let death: string | null = null;
      child.once('exit', (code, signal) => {
        death = `service exited (code ${code}, signal ${signal}); its last output:\n${output.slice(-4000)}`;
      });
      resolve({ url: match[1], pid: child.pid!, death: () => death, stop: () => stopChild(child) });
    };
    child.stdout.on('data', watch);
  });
}

/** SIGTERM lets main.ts close the app and its pool; SIGKILL if it hangs. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
