/**
 * The network guard: which resolved addresses a crawler of the public web may connect to.
 *
 * By default every special-purpose address is refused (IANA IPv4 and IPv6 Special-Purpose Address
 * Registries, RFC 6890 and its updates): a page on the public web must not steer the crawler into
 * the operator's own machine or network (loopback, RFC 1918 private ranges, link-local, CGNAT …),
 * nor at addresses that reach no single host (multicast, broadcast, documentation, reserved).
 * IPv6 addresses that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the embedded IPv4 address; other IPv6 addresses outside the
 * global unicast block 2000::/3 are refused (nothing outside it is assigned for public unicast).
 * `allow` judges each family by its own rules: an IPv6 allowance never opens an IPv4 range (not
 * through the IPv4-mapped, NAT64, 6to4 or IPv4-compatible spelling of an IPv4 address), an IPv4
 * allowance never opens an IPv6 range.
 *
 * The check runs on the IP the fetcher is about to connect to (the DNS answer it uses for the
 * connection, or the IP literal of the URL after WHATWG parsing has turned `0x7f000001`,
 * `2130706433`, `0177.0.0.1` and `127.1` into `127.0.0.1`), never on the host name, so names that
 * resolve inward, redirects and DNS rebinding all end at the same check. `allow` lists CIDRs that
 * are allowed although special (tests and the demo allow the loopback addresses of their simulated
 * web this way).
 */
import { BlockList, isIP } from 'node:net';
import os from 'node:os';
import { inIpv4Net, ipv4Net, ipv4Number, networkPredicate } from './limits.js';

/** [CIDR, name] — IPv4 special-purpose ranges refused by default. */
export const SPECIAL_IPV4: readonly (readonly [string, string])[] = Object.freeze([
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.88.99.0/24', '6to4 relay anycast (deprecated)'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
] as const);

/** [CIDR, name] — IPv6 special-purpose ranges inside 2000::/3 (everything outside it is refused too). */
export const SPECIAL_IPV6: readonly (readonly [string, string])[] = Object.freeze([
  ['2001::/23', 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
] as const);

/** IPv6 ranges outside 2000::/3 given their own name in refusals (the rest is "not global unicast"). */
const NAMED_OUTSIDE_GLOBAL: readonly (readonly [string, string])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

function ipv6Table(entries: readonly (readonly [string, string])[]): Array<{ bl: BlockList; name: string; cidr: string }> {
  return entries.map(([cidr, name]) => {
    const bl = new BlockList();
    const [a, bits] = cidr.split('/');
    bl.addSubnet(a!, Number(bits), 'ipv6');
    return { bl, name, cidr };
  });
}

// IPv4 ranges as numbers (limits.ts ipv4Net): checked on every fetch, without a SocketAddress per check
const V4 = SPECIAL_IPV4.map(([cidr, name]) => {
  const [a, bits] = cidr.split('/');
  return { net: ipv4Net(a!, Number(bits)), name, cidr };
});
const V6 = ipv6Table(SPECIAL_IPV6);
const V6_OUTSIDE = ipv6Table(NAMED_OUTSIDE_GLOBAL);
const GLOBAL_UNICAST = ipv6Table([['2000::/3', '']])[0]!.bl;

/** The 16 bytes of an IPv6 literal (isIP(ip) === 6), an embedded dotted quad included. */
function v6Bytes(ip: string): Uint8Array {
  let s = ip;
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.indexOf('.', lastColon) >= 0) {
    tail = s.slice(lastColon + 1).split('.').map(Number);
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const [head, rest] = s.includes('::') ? s.split('::') as [string, string] : [s, undefined];
  const h = head === '' ? [] : head.split(':');
  const r = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? h : [...h, ...new Array<string>(8 - h.length - r.length).fill('0'), ...r];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = parseInt(groups[i] ?? '0', 16);
    out[2 * i] = g >>> 8;
    out[2 * i + 1] = g & 0xff;
  }
  if (tail.length === 4) for (let i = 0; i < 4; i++) out[12 + i] = tail[i]!;
  return out;
}

function quad(b: Uint8Array, at: number): string {
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

/**
 * The IPv4 address an IPv6 address stands for, if any: IPv4-mapped (::ffff:0:0/96), NAT64
 * well-known prefix (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16, RFC 3056).
 */
export function embeddedIpv4(ip: string): string | null {
  if (isIP(ip) !== 6) return null;
  const b = v6Bytes(ip);
  let zeros10 = true;
  for (let i = 0; i < 10; i++) if (b[i] !== 0) zeros10 = false;
  if (zeros10 && b[10] === 0xff && b[11] === 0xff) return quad(b, 12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    let z = true;
    for (let i = 4; i < 12; i++) if (b[i] !== 0) z = false;
    if (z) return quad(b, 12);
  }
  if (b[0] === 0x20 && b[1] === 0x02) return quad(b, 2);
  return null;
}

/**
 * The IPv4 address carried by an IPv6 address of a range that is itself refused: IPv4-compatible
 * `::a.b.c.d` (::/96, deprecated, RFC 4291 §2.5.5.1; `::` and `::1` carry none) and the /96 form
 * of local-use NAT64 (64:ff9b:1::/48, RFC 8215). An allowance for the IPv6 range lets such an
 * address through only if the IPv4 address it carries is allowed too.
 */
export function carriedIpv4(ip: string): string | null {
  if (isIP(ip) !== 6) return null;
  const b = v6Bytes(ip);
  let zeros12 = true;
  for (let i = 0; i < 12; i++) if (b[i] !== 0) zeros12 = false;
  if (zeros12) return b[12] === 0 && b[13] === 0 && b[14] === 0 && b[15]! <= 1 ? null : quad(b, 12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b[4] === 0x00 && b[5] === 0x01) {
    let z = true;
    for (let i = 6; i < 12; i++) if (b[i] !== 0) z = false;
    if (z) return quad(b, 12);
  }
  return null;
}

/**
 * Why `ip` is a special-purpose address ('loopback 127.0.0.0/8', …), or null for a public one.
 * A string that is not an IP literal is reported as such (never allowed).
 */
export function specialAddress(ip: string): string | null {
  const fam = isIP(ip);
  if (fam === 0) return 'not an IP address';
  if (fam === 4) {
    const n = ipv4Number(ip);
    for (const e of V4) if (inIpv4Net(n, e.net)) return `${e.name} ${e.cidr}`;
    return null;
  }
  const v4 = embeddedIpv4(ip);
  if (v4 !== null) {
    const why = specialAddress(v4);
    return why === null ? null : `${why} (embedded in ${ip})`;
  }
  for (const e of V6_OUTSIDE) if (e.bl.check(ip, 'ipv6')) return `${e.name} ${e.cidr}`;
  if (!GLOBAL_UNICAST.check(ip, 'ipv6')) return 'not global unicast (outside 2000::/3)';
  for (const e of V6) if (e.bl.check(ip, 'ipv6')) return `${e.name} ${e.cidr}`;
  return null;
}

/**
 * The guard as a function: null when `ip` may be connected to, else the reason it may not.
 * `allow` (CIDRs) admits special addresses explicitly, each family by its own rules only: an IPv4
 * address by the IPv4 CIDRs; an IPv6 address that stands for an IPv4 address (IPv4-mapped, NAT64,
 * 6to4: embeddedIpv4) by the IPv4 CIDRs, as that IPv4 address; any other IPv6 address by the IPv6
 * CIDRs, and one that carries an IPv4 address (carriedIpv4) only if that address passes too. So
 * `::/0`, `::/1` or `::ffff:0:0/96` never open an IPv4 special-purpose range, and `0.0.0.0/0`
 * never opens an IPv6 one. Throws TypeError on a malformed CIDR.
 */
export function addressGuard(allow: readonly string[] = []): (ip: string) => string | null {
  const allowed = allow.length === 0 ? (): boolean => false : networkPredicate(allow);
  const judgeV4 = (v4: string): string | null => {
    const why = specialAddress(v4);
    return why === null || allowed(v4) ? null : why;
  };
  return (ip: string): string | null => {
    const fam = isIP(ip);
    if (fam === 0) return 'not an IP address';
    if (fam === 4) return judgeV4(ip);
    const v4 = embeddedIpv4(ip);
    if (v4 !== null) {
      const why = judgeV4(v4);
      return why === null ? null : `${why} (embedded in ${ip})`;
    }
    const why = specialAddress(ip);
    if (why === null) return null;
    if (!allowed(ip)) return why;
    const carried = carriedIpv4(ip);
    if (carried !== null) {
      const whyV4 = judgeV4(carried);
      if (whyV4 !== null) return `${whyV4} (carried in ${ip})`;
    }
    return null;
  };
}

/**
 * Does a connection to `ip` reach a socket bound to `bound` on this machine? A socket bound to one
 * address takes connections to that address only; one bound to the wildcard, to any loopback
 * address and any address of the machine's interfaces.
 */
export function isOwnAddress(ip: string, bound: string): boolean {
  const norm = (a: string): string => embeddedIpv4(a) ?? a.toLowerCase();
  const target = norm(ip);
  if (target === norm(bound)) return true;
  // Connecting to the unspecified address reaches this machine (Linux routes it to loopback).
  if (target === '0.0.0.0' || target === '::') return true;
  if (bound !== '0.0.0.0' && bound !== '::' && bound !== '') return false;
  if (target.startsWith('127.') || target === '::1') return true;
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (norm(a.address) === target) return true;
  }
  return false;
}
