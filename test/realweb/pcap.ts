/**
 * HTTP requests as the wire saw them, from a pcap file that tcpdump wrote on the loopback interface
 * of the tests' network namespace: each TCP segment whose payload begins with a request line
 * (`GET `, `HEAD `) is one request, timed by the kernel's capture timestamp. Linux's loopback
 * frames carry an Ethernet header (link type 1); IPv4 and IPv6 are read. A segment seen twice (a
 * retransmission: same connection and sequence number) counts once.
 */
import { readFile } from 'node:fs/promises';

export interface WireRequest {
  /** capture time, ms since the epoch (sub-ms) */
  t: number;
  method: string;
  /** request target as sent (path and query) */
  target: string;
  /** Host header, lower case, port removed */
  host: string;
  /** destination address and port */
  dst: string;
  port: number;
  /** User-Agent header ('' when absent) */
  userAgent: string;
}

export async function readPcapRequests(file: string): Promise<WireRequest[]> {
  return parsePcapRequests(await readFile(file));
}

export function parsePcapRequests(b: Buffer): WireRequest[] {
  if (b.length < 24) return [];
  const magic = b.readUInt32LE(0);
  let le = true;
  let nano = false;
  if (magic === 0xa1b2c3d4) nano = false;
  else if (magic === 0xa1b23c4d) nano = true;
  else if (b.readUInt32BE(0) === 0xa1b2c3d4) le = false;
  else if (b.readUInt32BE(0) === 0xa1b23c4d) { le = false; nano = true; }
  else throw new Error('not a pcap file');
  const u32 = (o: number): number => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const linkType = u32(20);
  if (linkType !== 1) throw new Error(`pcap link type ${linkType} (expected 1, Ethernet)`);
  const out: WireRequest[] = [];
  const seen = new Set<string>();
  let o = 24;
  while (o + 16 <= b.length) {
    const sec = u32(o);
    const frac = u32(o + 4);
    const incl = u32(o + 8);
    const start = o + 16;
    o = start + incl;
    if (o > b.length) break;
    const t = sec * 1000 + (nano ? frac / 1e6 : frac / 1e3);
    let p = start + 12;
    const etherType = b.readUInt16BE(p);
    p += 2;
    let src = '';
    let dst = '';
    let proto = 0;
    let ipEnd = 0;
    if (etherType === 0x0800) {
      const ihl = (b[p]! & 0x0f) * 4;
      const total = b.readUInt16BE(p + 2);
      proto = b[p + 9]!;
      src = `${b[p + 12]}.${b[p + 13]}.${b[p + 14]}.${b[p + 15]}`;
      dst = `${b[p + 16]}.${b[p + 17]}.${b[p + 18]}.${b[p + 19]}`;
      ipEnd = Math.min(o, p + total);
      p += ihl;
    } else if (etherType === 0x86dd) {
      proto = b[p + 6]!;
      const plen = b.readUInt16BE(p + 4);
      src = b.subarray(p + 8, p + 24).toString('hex');
      dst = b.subarray(p + 24, p + 40).toString('hex');
      ipEnd = Math.min(o, p + 40 + plen);
      p += 40;
    } else continue;
    if (proto !== 6) continue;
    const sport = b.readUInt16BE(p);
    const dport = b.readUInt16BE(p + 2);
    const seq = b.readUInt32BE(p + 4);
    const off = (b[p + 12]! >> 4) * 4;
    const payload = b.subarray(p + off, ipEnd);
    if (payload.length < 5) continue;
    const head = payload.toString('latin1');
    const sp = head.indexOf(' ');
    const method = sp > 0 ? head.slice(0, sp) : '';
    if (method !== 'GET' && method !== 'HEAD') continue;
    const key = `${src}:${sport}>${dst}:${dport}#${seq}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const lineEnd = head.indexOf('\r\n');
    const line = head.slice(0, lineEnd < 0 ? undefined : lineEnd);
    const target = line.split(' ')[1] ?? '';
    const header = (name: string): string => {
      const m = new RegExp(`\\r\\n${name}:[ \\t]*([^\\r\\n]*)`, 'i').exec(head);
      return m === null ? '' : m[1]!.trim();
    };
    const host = header('host').toLowerCase().replace(/:\d+$/, '');
    out.push({ t, method, target, host, dst, port: dport, userAgent: header('user-agent') });
  }
  return out.sort((a, b2) => a.t - b2.t);
}

/**
 * Gaps between consecutive requests to each host (Host header), in ms, with the two requests:
 * what a robots.txt Crawl-delay or a host delay is judged against.
 */
export function hostGaps(reqs: readonly WireRequest[]): Map<string, { gap: number; from: WireRequest; to: WireRequest }[]> {
  const by = new Map<string, WireRequest[]>();
  for (const r of reqs) {
    let l = by.get(r.host);
    if (l === undefined) by.set(r.host, (l = []));
    l.push(r);
  }
  const out = new Map<string, { gap: number; from: WireRequest; to: WireRequest }[]>();
  for (const [h, l] of by) {
    const g: { gap: number; from: WireRequest; to: WireRequest }[] = [];
    for (let i = 1; i < l.length; i++) g.push({ gap: l[i]!.t - l[i - 1]!.t, from: l[i - 1]!, to: l[i]! });
    out.set(h, g);
  }
  return out;
}
