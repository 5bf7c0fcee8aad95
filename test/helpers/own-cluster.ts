// A PostgreSQL cluster of a test's own, on a free port, made with Debian's
// pg_createcluster and dropped after: the fault tests stop, restart and
// terminate it without touching the machine's own cluster or another test's.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { startHttpsReceiver, type HttpsReceiver } from './https-receiver.ts';
import { freePort, killHard, startServiceChild, type ServiceChild } from './service-child.ts';

const VERSION = fs.existsSync('/etc/postgresql') ? fs.readdirSync('/etc/postgresql')[0] : undefined;

/** Why a fault test cannot run here, or false when it can (with the PostgreSQL suite, as root, on Debian's tools). */
export const ownClusterUnavailable: string | false = !process.env.DATABASE_URL
  ? 'runs with the PostgreSQL suite (DATABASE_URL): PGlite has no connection to lose'
  : !VERSION || !fs.existsSync('/usr/bin/pg_createcluster') || process.getuid?.() !== 0
    ? "needs Debian's pg_createcluster and root, to create a PostgreSQL cluster of its own"
    : false;

export interface OwnCluster {
  port: number;
  /** The `postgres` database, for the test's own statements (terminations, checks). */
  adminUrl: string;
  /** The `merx` database the service runs on. */
  serviceUrl: string;
  ctl(...args: string[]): void;
  drop(): void;
}

/** Creates, starts and fills the cluster with an empty `merx` database. */
export async function createOwnCluster(name: string): Promise<OwnCluster> {
  const port = await freePort();
  const ctl = (...args: string[]) => void execFileSync('pg_ctlcluster', [VERSION!, name, ...args], { stdio: 'pipe' });
  execFileSync('pg_createcluster', [VERSION!, name, '-p', String(port), '--', '--auth-host=trust', '--auth-local=trust'], { stdio: 'pipe' });
  ctl('start');
  const cluster: OwnCluster = {
    port,
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    serviceUrl: `postgres://postgres@127.0.0.1:${port}/merx`,
    ctl,
    drop() {
      try {
        execFileSync('pg_dropcluster', ['--stop', VERSION!, name], { stdio: 'pipe' });
      } catch {
        // already gone
      }
    },
  };
  await sql(cluster.adminUrl, 'CREATE DATABASE merx');
  return cluster;
}

/** One statement on a connection of its own. */
export async function sql<T = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** pg_terminate_backend on every connection of the service's database but the caller's; how many it ended. */
export async function terminateServiceConnections(cluster: OwnCluster): Promise<number> {
  const ended = await sql(
    cluster.adminUrl,
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'merx' AND pid <> pg_backend_pid()",
  );
  return ended.length;
}

/** A fault test's rig: its own cluster, an HTTPS webhook receiver, and the service as a child process on the cluster. */
export interface FaultRig {
  cluster: OwnCluster;
  receiver: HttpsReceiver;
  service: ServiceChild;
  close(): Promise<void>;
}

export async function startFaultRig(name: string, env: Record<string, string>): Promise<FaultRig> {
  const cluster = await createOwnCluster(name);
  const receiver = await startHttpsReceiver();
  const service = await startServiceChild(
    await freePort(),
    {
      DATABASE_URL: cluster.serviceUrl,
      RATE_LIMIT_REST_PER_MINUTE: '1000000',
      ...env,
    },
    receiver.caFile,
  );
  return {
    cluster,
    receiver,
    service,
    async close() {
      await killHard(service);
      await receiver.close();
      cluster.drop();
    },
  };
}
