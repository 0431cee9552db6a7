import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the service may connect to on a user's behalf (webhooks, URL ingestion).
 * Only public unicast addresses pass: loopback, RFC 1918, link-local, CGNAT, multicast, reserved and
 * documentation ranges, unique-local IPv6, the IPv4-mapped forms of all of these and cloud metadata
 * endpoints are refused.
 */

/** Metadata and provider-internal endpoints that sit in otherwise public address space. */
const METADATA_V4 = ['168.63.129.16/32'].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));
/** IPv6 global unicast space; everything outside it (::/8, fc00::/7, fe80::/10, ff00::/8, NAT64 …) is refused. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Why connecting to `address` is refused (a range name such as `loopback`), or null when it is public. */
export function blockedRange(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return 'invalid';
  }
  if (parsed.kind() === 'ipv4') return blockedV4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const inner = blockedV4(v6.toIPv4Address());
    return inner ? `ipv4Mapped ${inner}` : null;
  }
  if (!v6.match(GLOBAL_UNICAST_V6)) {
    const range = v6.range();
    return range === 'unicast' ? 'reserved' : range;
  }
  const range = v6.range();
  return range === 'unicast' ? null : range;
}

function blockedV4(address: ipaddr.IPv4): string | null {
  if (METADATA_V4.some((cidr) => address.match(cidr))) return 'metadata';
  const range = address.range();
  return range === 'unicast' ? null : range;
}

/** Host names that can only mean this machine or its cloud's metadata service. */
const LOCAL_NAMES = /(^|\.)(localhost|localdomain|internal|local)\.?$/i;

/**
 * A quick check of a URL's host before any connection, for early 400s: IP literals in refused
 * ranges and names such as `localhost`. Names are checked again on the resolved address at connect
 * time, which is the check that matters (DNS can change between the two).
 */
export function blockedHost(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return blockedRange(host);
  return LOCAL_NAMES.test(host) ? 'local name' : null;
}

/**
 * What is wrong with a URL the service is asked to call later, or null: it must be absolute
 * `https` (plain `http` only when private addresses are allowed), carry no credentials, and not
 * name a refused address.
 */
export function outboundUrlProblem(value: string, options: { allowPrivate: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return options.allowPrivate ? 'must use https or http' : 'must use https';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  if (!options.allowPrivate) {
    const range = blockedHost(url.hostname);
    if (range) return `must not point to a private or internal address (${url.hostname} is ${range})`;
  }
  return null;
}
