// Entry: config -> db -> migrate -> app -> listen; graceful shutdown.
import { ConfigError, loadConfig } from './config.ts';
import { startService, type RunningService } from './server.ts';
import { ensureDemoAccount, type DemoAccount } from './operator/demo.ts';
import { tellTheTruth } from './operator/demo-truth.ts';
import { isUnavailableError } from './platform/db/health.ts';
import { recordServerAddress } from './cli/server-address.ts';

// Issue 27: no database event may end the process. A connection that drops
// under a promise nobody awaited any more is logged by the health monitor; any
// other unhandled rejection is a defect and still ends the process.
process.on('unhandledRejection', (reason) => {
  if (isUnavailableError(reason)) return;
  throw reason;
});

/** Issue 27: a token is printed only when the service generated it; one from ADMIN_TOKEN never is. */
function operatorTokenLine(token: RunningService['adminToken']): string {
  if (token.source === 'ADMIN_TOKEN') return 'from ADMIN_TOKEN';
  if (token.shown) return token.file ? `${token.shown}   (generated; kept in ${token.file})` : `${token.shown}   (generated for this run)`;
  return `generated at an earlier start; not in ${token.file ?? 'this DATA_DIR'} here: set ADMIN_TOKEN to choose one`;
}

/** Issue 41: what the demo key is and whether it lasts. */
function demoKeyNote(demo: DemoAccount): string {
  const what = "the demo account's API key, fulfilment scopes";
  if (!demo.file) return `${what}; DATA_DIR=memory:// keeps nothing, so a new one at every start`;
  return `${what}; ${demo.kept ? 'the same as at the last start' : 'new'}, kept in ${demo.file} for the next starts`;
}

async function main() {
  const config = loadConfig();
  const service = await startService(config);
  const base = config.port === 0 ? service.url : config.publicBaseUrl;
  // Issue 41: on PostgreSQL too, so that `merx listen` run beside it finds the address (src/cli.ts listenBaseUrl).
  recordServerAddress(config.dataDir, base);
  const lines = [
    '',
    `Merx is running (${config.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`})`,
    `  API              ${base}/api/v1   (MCP: POST ${base}/api/mcp)`,
    `  API docs         ${base}/docs     (OpenAPI: ${base}/api/v1/openapi.json)`,
    `  Operator console ${base}/admin    (operator API: ${base}/admin/api, docs ${base}/admin/docs)`,
    `  Operator token   ${operatorTokenLine(service.adminToken)}`,
  ];
  if (config.seedDemo) {
    const demo = await ensureDemoAccount(service.db, config.dataDir);
    // Issue 41: real waybills from the courier simulator and tracked stock, made once, when the account is new.
    const truth = demo.created ? await tellTheTruth(service.services, demo.accountId) : null;
    const made = truth
      ? ` (created with 250 orders, ${truth.shipments} shipped through the courier simulator, ${truth.tracked} products with stock)`
      : '';
    lines.push(
      `  Demo account     ${demo.accountId}${made}`,
      `  Demo API key     ${demo.key}   (${demoKeyNote(demo)})`,
      '',
      `  Try: curl -H "Authorization: Bearer ${demo.key}" ${base}/api/v1/orders?limit=2`,
    );
  }
  // Issue 28: the banner comes last, after whatever start-up logged, so that it is what a terminal shows.
  await new Promise((resolve) => setImmediate(resolve));
  process.stdout.write(`${lines.join('\n')}\n\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.services.log.info({ signal }, 'shutting down');
    await service.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/** Issue 41: a database that cannot be reached names DATABASE_URL (its password hidden) and what to check. */
function databaseHint(err: unknown): string {
  const url = process.env.DATABASE_URL;
  if (!url || !isUnavailableError(err)) return '';
  let shown = url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    shown = parsed.toString();
  } catch {
    shown = '(not a URL)';
  }
  return `\n  while connecting to DATABASE_URL=${shown}: is PostgreSQL running and reachable there? Unset DATABASE_URL to use the embedded PGlite.`;
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${err.message}\n`);
  } else {
    process.stderr.write(`Merx could not start: ${err instanceof Error ? err.message : String(err)}${databaseHint(err)}\n`);
  }
  process.exit(1);
});
