// The embedded database's data directory (DATA_DIR): made level by level,
// proven writable, and locked to one process, each failure said in a
// sentence that names the directory.
import fs from 'node:fs';
import path from 'node:path';

/** Another live process holds the PGlite data directory. */
export class DataDirInUseError extends Error {
  readonly holderPid: number;
  constructor(dataDir: string, holderPid: number) {
    super(`DATA_DIR ${dataDir} is in use by process ${holderPid}; stop it or choose another DATA_DIR`);
    this.holderPid = holderPid;
  }
}

/**
 * Makes DATA_DIR (level by level: a recursive mkdir loops forever on some
 * special file systems, /proc among them) and proves it writable, or fails at
 * once with a message that names it. PGlite on a directory it cannot write
 * spins without a word.
 */
function prepareDataDir(dataDir: string): void {
  const fail = (why: string) =>
    new Error(`DATA_DIR ${dataDir} cannot be used: ${why}. Set DATA_DIR to a writable directory, or DATABASE_URL to use PostgreSQL.`);
  const missing: string[] = [];
  let existing = path.resolve(dataDir);
  while (!fs.existsSync(existing)) {
    missing.unshift(existing);
    existing = path.dirname(existing);
  }
  if (!fs.statSync(existing).isDirectory()) throw fail(`${existing} is not a directory`);
  for (const dir of missing) {
    try {
      fs.mkdirSync(dir);
    } catch (err) {
      throw fail(`cannot create ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  const probe = path.join(dataDir, `.merx-write-test-${process.pid}`);
  try {
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    throw fail(`cannot write in it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** PGlite does not lock its data directory; two processes on one directory would corrupt it. */
export function takeDirectoryLock(dataDir: string): string {
  prepareDataDir(dataDir);
  const lockFile = path.join(dataDir, 'merx.lock');
  try {
    fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
  } catch {
    const holder = Number(fs.readFileSync(lockFile, 'utf8'));
    if (holder && holder !== process.pid && isAlive(holder)) {
      throw new DataDirInUseError(dataDir, holder);
    }
    fs.writeFileSync(lockFile, String(process.pid));
  }
  return lockFile;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
