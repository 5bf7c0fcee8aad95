// SPEC: the URL is checked before every attempt. At a thousand attempts a
// second to a handful of URLs, the check's result (which includes a DNS
// answer) is reused for a few seconds per URL, like a short DNS TTL: a URL
// whose host starts resolving to a private address is refused within
// URL_CHECK_TTL_MS, and a changed subscription URL is a different key, so it
// is always checked afresh.
import { AppError } from '../../../platform/contract/errors.ts';
import { checkWebhookUrl, type CheckedTarget, type UrlPolicy } from '../subscriptions/url-policy.ts';

export const URL_CHECK_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** Either where to connect, or why the policy refused the URL. */
export type UrlVerdict = { ok: true; target: CheckedTarget } | { ok: false; reason: string };

interface Entry {
  at: number;
  verdict: Promise<UrlVerdict>;
}

export class UrlChecks {
  private entries = new Map<string, Entry>();
  private readonly policy: UrlPolicy;

  constructor(policy: UrlPolicy) {
    this.policy = policy;
  }

  check(url: string): Promise<UrlVerdict> {
    const now = Date.now();
    const entry = this.entries.get(url);
    if (entry && now - entry.at < URL_CHECK_TTL_MS) return entry.verdict;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    // Concurrent attempts to one URL share one check (one DNS lookup).
    const verdict = checkWebhookUrl(url, this.policy).then(
      (target): UrlVerdict => ({ ok: true, target }),
      (err): UrlVerdict => {
        const reason = err instanceof AppError ? (err.details as { reason?: string } | undefined)?.reason : undefined;
        return { ok: false, reason: reason ?? 'invalid' };
      },
    );
    this.entries.set(url, { at: now, verdict });
    return verdict;
  }
}
