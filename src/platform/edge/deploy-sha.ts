// SPEC 7 / GAPS General: X-Deploy-SHA is DEPLOY_SHA, else the git revision, cut to 10 characters.
import { execFileSync } from 'node:child_process';

export function resolveDeploySha(configured: string | null): string {
  if (configured) return configured.slice(0, 10);
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'], cwd: import.meta.dirname })
      .toString()
      .trim()
      .slice(0, 10);
  } catch {
    return '0000000000';
  }
}
