// Plain JavaScript on purpose: it must run on any Node, before a single .ts
// file is loaded (an old Node cannot even parse the import of one). Merx runs
// its TypeScript sources directly, which needs Node 24 (package.json engines).
export const REQUIRED_MAJOR = 24;

/**
 * The one-line message for an unsupported runtime, or null when `version` (e.g. "v20.20.2") will do.
 * @param {string} version
 * @param {string} execPath
 */
export function unsupportedNodeMessage(version, execPath) {
  const major = Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
  if (major >= REQUIRED_MAJOR) return null;
  return (
    `Merx needs Node.js ${REQUIRED_MAJOR} or newer, but this is Node ${version} (${execPath}). ` +
    `Run "npm install" without --omit=dev: it installs the pinned Node ${REQUIRED_MAJOR} that npm start and npx merx use; ` +
    `or install Node ${REQUIRED_MAJOR} and run again.`
  );
}

/** Exits with the message (no stack trace) when this Node cannot run Merx. */
export function requireSupportedNode() {
  const message = unsupportedNodeMessage(process.version, process.execPath);
  if (message) {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
}
