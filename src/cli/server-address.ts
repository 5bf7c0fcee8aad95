// Issue 28: the CLI's hints named http://localhost:3000 whatever port the
// running server used. The server started on an embedded database writes the
// base URL it serves under into DATA_DIR; the CLI, finding the directory
// held by that process, names that URL.
import fs from 'node:fs';
import path from 'node:path';

const FILE = 'merx-server.json';

export function recordServerAddress(dataDir: string, baseUrl: string): void {
  try {
    fs.writeFileSync(path.join(dataDir, FILE), JSON.stringify({ pid: process.pid, base_url: baseUrl }));
  } catch {
    // a hint only: a read-only or vanished directory costs the CLI its better message, nothing else
  }
}

/** The base URL the process `pid` recorded in `dataDir`, or null. */
export function serverAddressOf(dataDir: string, pid: number): string | null {
  try {
    const recorded = JSON.parse(fs.readFileSync(path.join(dataDir, FILE), 'utf8'));
    return recorded.pid === pid && typeof recorded.base_url === 'string' ? recorded.base_url : null;
  } catch {
    return null;
  }
}

/** Issue 41: the base URL a server still running recorded in `dataDir` (its process alive), or null. */
export function runningServerAddress(dataDir: string): string | null {
  try {
    const recorded = JSON.parse(fs.readFileSync(path.join(dataDir, FILE), 'utf8'));
    if (typeof recorded.pid !== 'number' || typeof recorded.base_url !== 'string') return null;
    process.kill(recorded.pid, 0); // throws when no such process runs
    return recorded.base_url;
  } catch {
    return null;
  }
}
