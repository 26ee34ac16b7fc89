import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks and account alerts may go (decisions §3), one policy for both checks: edge's
 * when a URL is set (an IP literal in any spelling, refused at once) and the dispatcher's when
 * it connects (every address a name resolves to). Only globally routable unicast addresses:
 * ipaddr.js
 * names every special range (loopback, private, link-local — which holds the cloud metadata
 * address 169.254.169.254 —, CGNAT, multicast, broadcast, reserved, unspecified, unique-local,
 * IPv4-mapped IPv6, NAT64, 6to4, Teredo...) and anything it does not call `unicast` is refused.
 * IPv4-mapped addresses are refused whole rather than unwrapped: a public IPv4 receiver is
 * reachable by its IPv4 address.
 */
export interface DestinationPolicy {
  /** Development only: `http://` URLs and loopback destinations (127.0.0.0/8, ::1) pass. */
  allowInsecureLoopback: boolean;
}

/** Why an IP address is refused, or null when it may be connected to. */
export function addressRefusal(address: string, policy: DestinationPolicy): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const range = ipaddr.parse(address).range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowInsecureLoopback) return null;
  return `${address} is a ${range} address`;
}

/** `[::1]` → `::1`: URL hostnames keep IPv6 brackets, sockets do not. */
export const bareHostname = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Checks what can be checked before any DNS lookup: the scheme, and the address when the host
 * is an IP literal. WHATWG URL parsing has already turned `2130706433` or `0x7f.1` into
 * `127.0.0.1`. Hostnames are checked after resolution, at connect time (guarded-agent.ts).
 */
export function urlRefusal(url: URL, policy: DestinationPolicy): string | null {
  const insecureAllowed = policy.allowInsecureLoopback && url.protocol === 'http:';
  if (url.protocol !== 'https:' && !insecureAllowed) {
    return `scheme ${url.protocol} is not allowed (https only)`;
  }
  const host = bareHostname(url);
  return isIP(host) === 0 ? null : addressRefusal(host, policy);
}
