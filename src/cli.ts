// `npx merx <command>` (OPERATOR_API Running): the operator's operations from
// a shell, printing JSON. Works on the same database the service uses; `listen`
// is an HTTP client of a running service instead (src/cli/listen.ts).
import { parseArgs } from 'node:util';
import { runningServerAddress } from './cli/server-address.ts';

// Issue 41: only what a command needs is loaded (the database commands' modules in cli/database-commands.ts), so that
// `--help` and `listen` start at once.
const USAGE = `usage: merx <command> [options]
  migrate                                         apply database migrations
  serve                                           start the service (same as npm start)
  courier-sim [--port 3100]                       run the courier simulator on its own (COURIER_<A|B|C>_URL=http://host:port/courier_a ...)
  accounts create --name N --email E [--plan pro|business|free]
  keys issue --account ID (--preset fulfilment|read_only|bridge | --scopes a,b) [--name N] [--expires-at TIME]
  keys revoke --key KEY_ID
  seed --account ID [--orders 1000] [--products 50] [--customers N] [--seed 1]
  secrets reseal                                  re-seal every secret at rest under the first key of ENCRYPTION_KEYS (key rotation)
  listen --forward-to URL [--events order.created,...] [--since TIME] [--base-url URL] [--key KEY]
                                                  forward the account's events to a local URL, signed as webhooks
                                                  (--key defaults to MERX_API_KEY; --base-url to MERX_BASE_URL, else the server running from DATA_DIR, else http://localhost:PORT)
Uses DATABASE_URL, else embedded PGlite in DATA_DIR (default ./data); listen uses the API only.`;

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

function need(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || !value) throw new Error(`--${name} is required\n\n${USAGE}`);
  return value;
}

/**
 * Issue 41: where `merx listen` looks, and why, so it never targets :3000 silently: --base-url, MERX_BASE_URL,
 * the server running from this DATA_DIR (it records its address), else PUBLIC_BASE_URL or http://localhost:PORT.
 */
function listenBaseUrl(given: string | undefined): [string, string] {
  if (given) return [given, '--base-url'];
  if (process.env.MERX_BASE_URL) return [process.env.MERX_BASE_URL, 'MERX_BASE_URL'];
  const dataDir = process.env.DATA_DIR || './data';
  const running = runningServerAddress(dataDir);
  if (running) return [running, `the server running from ${dataDir}`];
  if (process.env.PUBLIC_BASE_URL) return [process.env.PUBLIC_BASE_URL, 'PUBLIC_BASE_URL'];
  const port = process.env.PORT || '3000';
  return [`http://localhost:${port}`, `the default (no --base-url, MERX_BASE_URL or server running from ${dataDir})`];
}

async function run(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      plan: { type: 'string' },
      account: { type: 'string' },
      preset: { type: 'string' },
      scopes: { type: 'string' },
      key: { type: 'string' },
      orders: { type: 'string' },
      products: { type: 'string' },
      customers: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean' },
      port: { type: 'string' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      'base-url': { type: 'string' },
      since: { type: 'string' },
      'expires-at': { type: 'string' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || !command) return void process.stdout.write(`${USAGE}\n`);
  switch (command) {
    case 'serve':
      await import('./main.ts');
      return;
    case 'courier-sim': {
      const { startStandaloneSimulator } = await import('./couriers/simulator/standalone.ts');
      const { SIMULATED_COURIERS } = await import('./couriers/simulator/simulated-couriers.ts');
      const { courierProviders } = await import('./couriers/catalog.ts');
      const url = await startStandaloneSimulator(Number(values.port ?? 3100));
      const settings = courierProviders()
        .filter((p) => SIMULATED_COURIERS.has(p.slug))
        .map((p) => `${p.urlVariable}=${url}/${p.slug}`);
      process.stdout.write(`courier simulator at ${url}: set ${settings.join(', ')}\n`);
      return;
    }
    case 'listen': {
      const { listen } = await import('./cli/listen.ts');
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      const [baseUrl, baseUrlFrom] = listenBaseUrl(values['base-url']);
      return listen({
        forwardTo: need(values, 'forward-to'),
        baseUrl,
        baseUrlFrom,
        key: values.key ?? process.env.MERX_API_KEY ?? '',
        events: (values.events ?? '')
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean),
        since: values.since,
        signal: stop.signal,
      });
    }
    case 'migrate':
    case 'accounts create':
    case 'keys issue':
    case 'keys revoke':
    case 'seed':
    case 'secrets reseal': {
      const { runDatabaseCommand } = await import('./cli/database-commands.ts');
      const { help: _help, ...given } = values;
      return print(await runDatabaseCommand(command, given, (name) => need(values, name)));
    }
    default:
      throw new Error(`unknown command "${command}"\n\n${USAGE}`);
  }
}

run(process.argv.slice(2)).catch(async (err) => {
  const [{ ConfigError }, { ListenError }, { toAppError }] = await Promise.all([
    import('./config.ts'),
    import('./cli/listen.ts'),
    import('./platform/contract/errors.ts'),
  ]);
  const known = err instanceof ConfigError || err instanceof ListenError || (err instanceof Error && !('code' in err));
  const message = known ? err.message : toAppError(err).message;
  process.stderr.write(`merx: ${message}\n`);
  process.exit(1);
});
