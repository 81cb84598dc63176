/**
 * The key of a server's politeness queue (thesis VII.1: τs spaces requests per server IP). An IPv4
 * address is its own key. An IPv6 address is keyed by its /64: one site or customer usually gets a
 * whole /64 (RFC 6177 and common hosting practice), so a host spread over many addresses of one
 * /64 — or a spam farm given one address per name — is still one server for politeness. The key
 * is the /64 prefix in canonical form, e.g. `2001:db8:1:2::/64`.
 */
import { isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (IPv4-mapped tails folded in); null if not IPv6. */
function groups(ip: string): number[] | null {
  if (!isIPv6(ip)) return null;
  let s = ip.toLowerCase();
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4 !== null) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    s = s.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') as [string, string] : [s, null];
  const h = head === '' ? [] : head.split(':');
  const t = tail === null || tail === '' ? [] : tail.split(':');
  const fill = tail === null ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/** Politeness key of a server address: IPv4 as is, IPv6 as its /64 prefix. */
export function ipQueueKey(ip: string): string {
  const g = groups(ip);
  if (g === null) return ip;
  // Canonical text of the prefix (RFC 5952 for the zero run is not needed: the key is only compared).
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}
