// On PostgreSQL every test file gets a database of its own, a copy of the
// stage's database (migrated once by the global setup, test/setup/global-setup.ts),
// so that files running side by side share nothing: a shipment batch made in
// one file is run by that file's service and its courier simulator only, and
// an operator's courier mode set in one file reaches no other. Preloaded
// (--import) into every test process; the env it rewrites is what the
// harness, the helpers and the children they start read.
import pg from 'pg';
import { fileDatabaseName, renameDatabase } from './database-names.ts';

const stage = process.env.DATABASE_URL;
// Only test processes: the runner's own process (and anything else loading this) keeps the stage's database.
if (stage && process.env.NODE_TEST_CONTEXT && !process.env.MERX_TEST_FILE_DATABASE) {
  const direct = process.env.DATABASE_DIRECT_URL ?? stage;
  const template = new URL(direct).pathname.slice(1);
  const name = fileDatabaseName(template, process.pid);
  const admin = new pg.Client({ connectionString: renameDatabase(direct, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
  process.env.DATABASE_URL = renameDatabase(stage, name);
  if (process.env.DATABASE_DIRECT_URL) process.env.DATABASE_DIRECT_URL = renameDatabase(process.env.DATABASE_DIRECT_URL, name);
  if (process.env.DATABASE_READ_URLS) {
    const replicas = process.env.DATABASE_READ_URLS.split(',').map((url) => renameDatabase(url, name));
    process.env.DATABASE_READ_URLS = replicas.join(',');
    // A replica replays the CREATE DATABASE a moment later: the file starts once each has it.
    for (const url of replicas) await untilConnects(url);
  }
  process.env.MERX_TEST_FILE_DATABASE = name;
}

async function untilConnects(url: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      if (tries > 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
