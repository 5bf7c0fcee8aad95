// SPEC Webhooks URL rules and GAPS Webhooks: https only, no credentials,
// public hosts only; checked on create, update and before every attempt.
// The attempt then connects to an address this check approved, so a DNS
// answer cannot change between the check and the connection.
import dns from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../../platform/contract/errors.ts';

export const SINK_PATH = '/api/webhooks/sink';

export type PolicyReason = 'characters' | 'scheme' | 'credentials' | 'host_blocked' | 'private_ip' | 'self_target' | 'dns_private' | 'dns_failed';

export interface UrlPolicy {
  /** The service's own public base URL (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** WEBHOOK_ALLOW_HOSTS: host names and CIDRs an operator allows as private targets. */
  allowHosts: string[];
  resolve?: (hostname: string) => Promise<string[]>;
}

export type CheckedTarget =
  | { kind: 'remote'; url: URL; address: string; family: 4 | 6 }
  /** The service's own debug sink: delivered over loopback to this very process. */
  | { kind: 'sink'; url: URL };

function refused(reason: PolicyReason, message: string): AppError {
  return new AppError('validation_failed', message, { reason });
}

/** IANA's global unicast space for IPv6: anything outside it (::/96, 100::/64, fec0::/10, 64:ff9b::/96, ...) is not a public host. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * Only global unicast addresses are public: the rule is an allow list, so a
 * range nobody thought of is refused, not let through. ipaddr.js names every
 * special-purpose range (private, loopback, link-local, CGNAT, reserved
 * 198.18/15 and 240/4, unspecified 0/8, documentation 2001:db8::/32,
 * discard 100::/64, site-local fec0::/10, ...) and calls the rest 'unicast'.
 * IPv4-mapped addresses (::ffff:a.b.c.d, how dual-stack resolvers write IPv4)
 * are judged as the IPv4 address they are. Other forms that carry an IPv4
 * address inside (IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16,
 * Teredo 2001::/32) are refused whatever they carry: a webhook endpoint has a
 * native address, and these exist to reach somewhere else.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  if (ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || (ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

function allowedByOperator(host: string, address: string | null, allowHosts: string[]): boolean {
  for (const entry of allowHosts) {
    if (entry.toLowerCase() === host) return true;
    if (address && entry.includes('/') && ipaddr.isValid(address)) {
      try {
        const [range, bits] = ipaddr.parseCIDR(entry);
        const ip = ipaddr.process(address);
        if (ip.kind() === range.kind() && ip.match(range, bits)) return true;
      } catch {
        // not a CIDR: compared as a host above
      }
    } else if (address && entry === address) {
      return true;
    }
  }
  return false;
}

const defaultResolve = async (hostname: string) => (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Whitespace and control characters anywhere in the text: C0, DEL and C1
 * controls, every Unicode space and line separator, and invisible format
 * characters (bidi overrides, zero-width spaces, the soft hyphen). The URL
 * parser strips them at the ends and drops tabs and line breaks inside, so
 * "https://a.example/x\r\nHost: b" was stored as given and called as
 * something else (issue 27). A URL that needs one writes it percent-encoded.
 */
const WHITESPACE_OR_CONTROL = /[\s\p{Cc}\p{Cf}\p{Z}]/u;

/** Checks a webhook URL; returns where to connect, or throws 400 validation_failed with details.reason. */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<CheckedTarget> {
  if (WHITESPACE_OR_CONTROL.test(raw)) {
    throw refused('characters', 'url must not contain spaces, tabs, line breaks or other control characters (percent-encode them)');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('scheme', 'url must be an absolute https URL');
  }
  const own = new URL(policy.publicBaseUrl);
  // The WHATWG parser already normalised numeric hosts: 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 are all 127.0.0.1.
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const isOwnHost = host === own.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isOwnHost && url.pathname === SINK_PATH && url.protocol === own.protocol && !url.username && !url.password) {
    return { kind: 'sink', url };
  }
  if (url.protocol !== 'https:') throw refused('scheme', 'url must use https');
  if (url.username || url.password) throw refused('credentials', 'url must not carry a user name or password');

  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    if (!allowedByOperator(host, null, policy.allowHosts)) throw refused('host_blocked', `host ${host} is not a public host`);
  }
  if (isOwnHost) throw refused('self_target', 'url must not point at this service (its debug sink excepted)');

  const literal = ipaddr.isValid(host) ? host : null;
  if (literal) {
    if (!isPublicAddress(literal) && !allowedByOperator(host, literal, policy.allowHosts)) {
      throw refused('private_ip', 'url points at a private, loopback or otherwise non-public address');
    }
    return { kind: 'remote', url, address: literal, family: ipaddr.parse(literal).kind() === 'ipv6' ? 6 : 4 };
  }
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? defaultResolve)(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) throw refused('dns_failed', `host ${host} does not resolve`);
  const hostAllowed = allowedByOperator(host, null, policy.allowHosts);
  for (const address of addresses) {
    if (!isPublicAddress(address) && !hostAllowed && !allowedByOperator(host, address, policy.allowHosts)) {
      throw refused('dns_private', `host ${host} resolves to a non-public address`);
    }
  }
  return { kind: 'remote', url, address: addresses[0], family: ipaddr.parse(addresses[0]).kind() === 'ipv6' ? 6 : 4 };
}
