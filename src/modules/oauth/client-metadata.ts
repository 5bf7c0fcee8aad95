// EXTENSIONS 10: a client may use as its client_id the HTTPS URL of a client
// metadata document (MCP authorization 2025-11-25). The document is fetched
// under the webhook URL policy: the same SSRF rules
// (webhooks/subscriptions/url-policy.ts), the socket pinned to the address the
// policy approved, 5 s and 64 KB at most.
import { Agent, request } from 'undici';
import { AppError } from '../../platform/contract/errors.ts';
import { checkWebhookUrl, type UrlPolicy } from '../webhooks/subscriptions/url-policy.ts';
import { pinnedLookup, trustedContext } from '../webhooks/delivery/https-sender.ts';
import { OAuthError } from './oauth-error.ts';

export const METADATA_TIMEOUT_MS = 5_000;
export const METADATA_MAX_BYTES = 64 * 1024;

export function isMetadataDocumentId(clientId: string): boolean {
  return clientId.startsWith('https://');
}

/** The document at `clientId`, checked to name itself and to list redirect_uris; an OAuthError saying why not. */
export async function fetchClientMetadata(clientId: string, policy: UrlPolicy): Promise<Record<string, unknown>> {
  let target;
  try {
    target = await checkWebhookUrl(clientId, policy);
  } catch (err) {
    const reason = err instanceof AppError ? (err.details as { reason?: string } | undefined)?.reason : undefined;
    throw new OAuthError(
      'invalid_client',
      `the client metadata document's URL is refused by the URL policy (${reason ?? 'invalid'}): ${err instanceof Error ? err.message : ''}`,
    );
  }
  if (target.kind !== 'remote') throw new OAuthError('invalid_client', 'the client metadata document must be on another host');
  const trust = trustedContext();
  const agent = new Agent({
    connect: { lookup: pinnedLookup(target.address, target.family), ...(trust.context ? { secureContext: trust.context } : {}) },
    headersTimeout: METADATA_TIMEOUT_MS,
    bodyTimeout: METADATA_TIMEOUT_MS,
  });
  let text = '';
  try {
    const res = await request(target.url, {
      dispatcher: agent,
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new OAuthError('invalid_client', `the client metadata document answered ${res.statusCode}`);
    }
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > METADATA_MAX_BYTES) {
        res.body.destroy();
        throw new OAuthError('invalid_client', `the client metadata document is larger than ${METADATA_MAX_BYTES} bytes`);
      }
      text += (chunk as Buffer).toString('utf8');
    }
  } catch (err) {
    if (err instanceof OAuthError) throw err;
    throw new OAuthError('invalid_client', `the client metadata document could not be fetched: ${(err as Error).message}`);
  } finally {
    agent.close().catch(() => {});
  }
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_client', 'the client metadata document is not JSON');
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new OAuthError('invalid_client', 'the client metadata document is not a JSON object');
  if (doc.client_id !== clientId) throw new OAuthError('invalid_client', 'the client metadata document names another client_id than its own URL');
  if (!Array.isArray(doc.redirect_uris) || !doc.redirect_uris.every((u) => typeof u === 'string')) {
    throw new OAuthError('invalid_client', 'the client metadata document lists no redirect_uris');
  }
  return doc;
}
