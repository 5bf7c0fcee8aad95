// Issue 38's drill stack, from Debian's packages, every piece in a directory
// and on ports of its own (nothing else on the machine is touched): one etcd,
// two PostgreSQL 15 nodes under Patroni (synchronous_mode: true, and
// primary_start_timeout: 0 so a crashed primary fails over instead of
// restarting in place), and HAProxy in TCP mode with Patroni's REST checks:
// a write port that reaches only the node answering /primary, a read port for
// /replica. This is the topology docs/operations.md "High availability" shows.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/helpers/service-child.ts';

const PG_BIN = `/usr/lib/postgresql/${fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort().at(-1) : '15'}/bin`;

/** Why the drill cannot run here, or false. */
export function drillUnavailable(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (PostgreSQL runs as the postgres user)';
  for (const tool of ['/usr/bin/etcd', '/usr/bin/patroni', '/usr/bin/patronictl', '/usr/sbin/haproxy', `${PG_BIN}/postgres`]) {
    if (!fs.existsSync(tool)) return `needs ${tool} (Debian: etcd-server, patroni, haproxy, postgresql)`;
  }
  return false;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  config: string;
  process: ChildProcess;
}

export interface DrillCluster {
  dir: string;
  nodes: PatroniNode[];
  /** HAProxy's port to the primary, and to the replicas. */
  writePort: number;
  readPort: number;
  /** postgres://…/merx through the write port, and through the read port. */
  writeUrl: string;
  readUrl: string;
  /** The node Patroni calls the leader now (its REST API's /primary answers 200). */
  leader(): Promise<PatroniNode | null>;
  /** SIGKILL to the leader's postmaster (its PID from postmaster.pid); the node killed. */
  killLeaderPostmaster(): Promise<PatroniNode>;
  /** A planned `patronictl switchover` to the other node; the new leader's name. */
  switchover(): Promise<string>;
  /** Resolves once a leader and its synchronous standby are both serving through HAProxy. */
  waitHealthy(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

function patroniConfig(scope: string, node: { name: string; pgPort: number; restPort: number; dir: string }, etcdPort: number): string {
  return `scope: ${scope}
namespace: /merx-drill/
name: ${node.name}
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:${node.restPort}
  connect_address: 127.0.0.1:${node.restPort}
etcd3:
  hosts: 127.0.0.1:${etcdPort}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    primary_start_timeout: 0
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 200
  initdb:
    - encoding: UTF8
    - auth: trust
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${node.pgPort}
  connect_address: 127.0.0.1:${node.pgPort}
  data_dir: ${node.dir}/data
  bin_dir: ${PG_BIN}
  pgpass: ${node.dir}/pgpass
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: replicator
      password: replicator
    rewind:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: '${node.dir}'
`;
}

function haproxyConfig(writePort: number, readPort: number, nodes: Array<{ name: string; pgPort: number; restPort: number }>): string {
  const servers = nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 200 check port ${n.restPort}`).join('\n');
  // Patroni's documented HAProxy setup, with checks every 500 ms so a change is seen within a second.
  return `global
  maxconn 2000
defaults
  mode tcp
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 1s
listen primary
  bind 127.0.0.1:${writePort}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${servers}
listen replicas
  bind 127.0.0.1:${readPort}
  option httpchk OPTIONS /replica
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${servers}
`;
}

async function restStatus(node: PatroniNode, path: string): Promise<number> {
  try {
    const res = await fetch(`http://127.0.0.1:${node.restPort}${path}`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

async function canQuery(url: string, text: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query(text);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Starts the whole stack in a fresh temporary directory and waits until it serves. */
export async function startDrillCluster(log: (line: string) => void = () => {}): Promise<DrillCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merx-failover-'));
  fs.chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const spawnLogged = (name: string, command: string, args: string[]) => {
    const out = fs.openSync(path.join(dir, `${name}.log`), 'a');
    const child = spawn(command, args, { stdio: ['ignore', out, out], cwd: dir });
    children.push(child);
    return child;
  };
  const [etcdPort, etcdPeerPort, writePort, readPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  spawnLogged('etcd', '/usr/bin/etcd', [
    '--name',
    'drill',
    '--data-dir',
    path.join(dir, 'etcd'),
    '--listen-client-urls',
    `http://127.0.0.1:${etcdPort}`,
    '--advertise-client-urls',
    `http://127.0.0.1:${etcdPort}`,
    '--listen-peer-urls',
    `http://127.0.0.1:${etcdPeerPort}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${etcdPeerPort}`,
    '--initial-cluster',
    `drill=http://127.0.0.1:${etcdPeerPort}`,
    '--initial-cluster-state',
    'new',
  ]);
  const scope = `merx-drill-${process.pid}`;
  const nodes: PatroniNode[] = [];
  for (const name of ['node1', 'node2']) {
    const nodeDir = path.join(dir, name);
    fs.mkdirSync(nodeDir, { mode: 0o700 });
    const [pgPort, restPort] = [await freePort(), await freePort()];
    const config = path.join(nodeDir, 'patroni.yml');
    fs.writeFileSync(config, patroniConfig(scope, { name, pgPort, restPort, dir: nodeDir }, etcdPort));
    execFileSync('chown', ['-R', 'postgres:postgres', nodeDir]);
    nodes.push({ name, pgPort, restPort, dataDir: path.join(nodeDir, 'data'), config, process: null as unknown as ChildProcess });
  }
  // etcd first, then node1 bootstraps alone before node2 joins as its replica.
  await waitFor(
    () =>
      fetch(`http://127.0.0.1:${etcdPort}/health`).then(
        (r) => r.ok,
        () => false,
      ),
    20_000,
    'etcd',
  );
  const startNode = (node: PatroniNode) => {
    node.process = spawnLogged(node.name, '/usr/sbin/runuser', ['-u', 'postgres', '--', '/usr/bin/patroni', node.config]);
  };
  startNode(nodes[0]);
  await waitFor(async () => (await restStatus(nodes[0], '/primary')) === 200, 60_000, 'node1 to bootstrap');
  startNode(nodes[1]);
  fs.writeFileSync(path.join(dir, 'haproxy.cfg'), haproxyConfig(writePort, readPort, nodes));
  spawnLogged('haproxy', '/usr/sbin/haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')]);

  const adminUrl = `postgres://postgres@127.0.0.1:${writePort}/postgres`;
  const writeUrl = `postgres://postgres@127.0.0.1:${writePort}/merx`;
  const readUrl = `postgres://postgres@127.0.0.1:${readPort}/merx`;

  const cluster: DrillCluster = {
    dir,
    nodes,
    writePort,
    readPort,
    writeUrl,
    readUrl,
    async leader() {
      for (const node of nodes) if ((await restStatus(node, '/primary')) === 200) return node;
      return null;
    },
    async killLeaderPostmaster() {
      const leader = await cluster.leader();
      if (!leader) throw new Error('no leader to kill');
      const pid = Number(fs.readFileSync(path.join(leader.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      log(`SIGKILL to ${leader.name}'s postmaster (pid ${pid})`);
      return leader;
    },
    async switchover() {
      const leader = await cluster.leader();
      const candidate = nodes.find((n) => n !== leader)!;
      // Not execFileSync: the drill's load goes on while patronictl waits for the switchover.
      await promisify(execFile)('/usr/sbin/runuser', [
        '-u',
        'postgres',
        '--',
        '/usr/bin/patronictl',
        '-c',
        leader!.config,
        'switchover',
        scope,
        '--leader',
        leader!.name,
        '--candidate',
        candidate.name,
        '--force',
      ]);
      log(`patronictl switchover ${leader!.name} -> ${candidate.name}`);
      await waitFor(async () => (await cluster.leader()) === candidate, 60_000, `${candidate.name} to lead`);
      return candidate.name;
    },
    async waitHealthy(timeoutMs) {
      await waitFor(
        async () => {
          const leader = await cluster.leader();
          const replica = nodes.find((n) => n !== leader);
          // /sync: the replica is the synchronous standby, so a crashed leader may fail over to it.
          return (
            !!leader &&
            !!replica &&
            (await restStatus(replica, '/sync')) === 200 &&
            (await canQuery(adminUrl, 'SELECT 1')) &&
            (await canQuery(readUrl.replace('/merx', '/postgres'), 'SELECT 1'))
          );
        },
        timeoutMs,
        'a leader and a streaming replica behind HAProxy',
      );
    },
    async close() {
      for (const child of children.reverse()) child.kill('SIGTERM');
      await sleep(3000);
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // Patroni's postmasters are its children's: end whatever still runs from the drill's directory.
      for (const node of nodes) {
        try {
          const pid = Number(fs.readFileSync(path.join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
          process.kill(pid, 'SIGKILL');
        } catch {
          // not running
        }
      }
      await sleep(500);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.waitHealthy(90_000);
    await canQuery(adminUrl, 'CREATE DATABASE merx');
    await waitFor(() => canQuery(readUrl, 'SELECT 1'), 30_000, 'the merx database on the replica');
  } catch (err) {
    await cluster.close();
    throw err;
  }
  return cluster;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}`);
}
