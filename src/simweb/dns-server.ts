/**
 * An authoritative DNS server for the simulated zone, on UDP, speaking the RFC 1035 wire format:
 * header, one question (echoed byte for byte, so 0x20 case randomization survives), A answers with
 * a TTL (a compression pointer to the question name), or AAAA answers for the IPv6-only hosts
 * (WebParams.v6Share: address ::1, no A record). Per host it can fail on purpose:
 *   nxdomain  → RCODE 3;  servfail → RCODE 2;  no-answer → NOERROR with zero answers;  drop → no reply.
 * Names outside the zone get NXDOMAIN (under .test) or REFUSED (elsewhere); queries for a type the
 * name has no record of (AAAA of an IPv4 host, A of an IPv6-only host, MX …) get NOERROR/no data; malformed queries get FORMERR when a header can be read,
 * and are ignored otherwise. Answers are a pure function of the query, so they are byte-identical
 * across runs with the same seed and params.
 */
import dgram from 'node:dgram';
import type { WebGraph } from './model/graph.js';

const TYPE_A = 1, TYPE_AAAA = 28, CLASS_IN = 1, TYPE_ANY = 255;
const RCODE_NOERROR = 0, RCODE_FORMERR = 1, RCODE_SERVFAIL = 2, RCODE_NXDOMAIN = 3, RCODE_NOTIMP = 4, RCODE_REFUSED = 5;

export interface DnsStats { queries: number; answered: number; dropped: number; malformed: number; }

/** Parse the question of a query. Returns null when malformed. */
export function parseQuestion(msg: Buffer): { name: string; qtype: number; qclass: number; end: number } | null {
  if (msg.length < 12) return null;
  const qd = msg.readUInt16BE(4);
  if (qd !== 1) return null;
  let pos = 12;
  const labels: string[] = [];
  let total = 0;
  for (;;) {
    if (pos >= msg.length) return null;
    const len = msg[pos]!;
    if (len === 0) { pos++; break; }
    if (len > 63) return null; // compression pointers are not valid in a query's question
    if (pos + 1 + len > msg.length) return null;
    labels.push(msg.toString('latin1', pos + 1, pos + 1 + len));
    total += len + 1;
    if (total > 255) return null;
    pos += 1 + len;
  }
  if (pos + 4 > msg.length) return null;
  return { name: labels.join('.'), qtype: msg.readUInt16BE(pos), qclass: msg.readUInt16BE(pos + 2), end: pos + 4 };
}

/** Build the reply to one query, or null to stay silent. Exported for tests. */
export function answerQuery(web: WebGraph, msg: Buffer): Buffer | null {
  if (msg.length < 12) return null;
  const flags = msg.readUInt16BE(2);
  if (flags & 0x8000) return null; // a response, not a query
  const opcode = (flags >>> 11) & 0xf;
  const rd = flags & 0x0100;
  const header = (rcode: number, qd: number, an: number, aa: boolean) => {
    const h = Buffer.alloc(12);
    msg.copy(h, 0, 0, 2); // id
    h.writeUInt16BE(0x8000 | (opcode << 11) | (aa ? 0x0400 : 0) | rd | rcode, 2);
    h.writeUInt16BE(qd, 4);
    h.writeUInt16BE(an, 6);
    return h;
  };
  if (opcode !== 0) return header(RCODE_NOTIMP, 0, 0, false);
  const q = parseQuestion(msg);
  if (!q) return header(RCODE_FORMERR, 0, 0, false);
  const question = msg.subarray(12, q.end);
  const name = q.name.toLowerCase().replace(/\.$/, '');
  if (q.qclass !== CLASS_IN) return Buffer.concat([header(RCODE_REFUSED, 1, 0, false), question]);
  if (!name.endsWith('.test') && name !== 'test') return Buffer.concat([header(RCODE_REFUSED, 1, 0, false), question]);
  const info = web.hostInfo(name);
  if (!info || info.dns === 'nxdomain') return Buffer.concat([header(RCODE_NXDOMAIN, 1, 0, true), question]);
  if (info.dns === 'drop') return null;
  if (info.dns === 'servfail') return Buffer.concat([header(RCODE_SERVFAIL, 1, 0, false), question]);
  const v6 = info.ip.includes(':');
  const rtype = v6 ? TYPE_AAAA : TYPE_A;
  if (info.dns === 'no-answer' || (q.qtype !== rtype && q.qtype !== TYPE_ANY)) {
    return Buffer.concat([header(RCODE_NOERROR, 1, 0, true), question]);
  }
  const addr = v6 ? ipv6Bytes(info.ip) : Buffer.from(info.ip.split('.').map(Number));
  const rr = Buffer.alloc(12 + addr.length);
  rr.writeUInt16BE(0xc00c, 0); // pointer to the question name at offset 12
  rr.writeUInt16BE(rtype, 2);
  rr.writeUInt16BE(CLASS_IN, 4);
  rr.writeUInt32BE(web.params.dnsTtl >>> 0, 6);
  rr.writeUInt16BE(addr.length, 10);
  addr.copy(rr, 12);
  return Buffer.concat([header(RCODE_NOERROR, 1, 1, true), question, rr]);
}

/** The 16 bytes of an IPv6 address in text form (`::` expanded). */
function ipv6Bytes(ip: string): Buffer {
  const [head, tail] = ip.includes('::') ? (ip.split('::') as [string, string]) : [ip, ''];
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const groups = [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

/**
 * Extra A records outside the generated web (tests: a name that points inward, a name that
 * rebinds). A function is asked on every query, so its answer can change between queries; extra
 * answers carry TTL 0 (not to be cached).
 */
export type ExtraDnsRecords = ReadonlyMap<string, string | (() => string)>;

/** The answer to an A query for `name` from the extra records, or null when the name is not there. */
export function extraAnswer(extra: ExtraDnsRecords, msg: Buffer): Buffer | null {
  if (msg.length < 12 || (msg.readUInt16BE(2) & 0xf800) !== 0) return null; // a response, or not a standard query
  const q = parseQuestion(msg);
  if (!q || q.qclass !== CLASS_IN || (q.qtype !== TYPE_A && q.qtype !== TYPE_ANY)) return null;
  const rec = extra.get(q.name.toLowerCase().replace(/\.$/, ''));
  if (rec === undefined) return null;
  const ip = typeof rec === 'string' ? rec : rec();
  const h = Buffer.alloc(12);
  msg.copy(h, 0, 0, 2);
  h.writeUInt16BE(0x8000 | 0x0400 | (msg.readUInt16BE(2) & 0x0100), 2);
  h.writeUInt16BE(1, 4);
  h.writeUInt16BE(1, 6);
  const rr = Buffer.alloc(16);
  rr.writeUInt16BE(0xc00c, 0);
  rr.writeUInt16BE(TYPE_A, 2);
  rr.writeUInt16BE(CLASS_IN, 4);
  rr.writeUInt32BE(0, 6);
  rr.writeUInt16BE(4, 10);
  const parts = ip.split('.');
  for (let i = 0; i < 4; i++) rr[12 + i] = Number(parts[i]);
  return Buffer.concat([h, msg.subarray(12, q.end), rr]);
}

export class SimDnsServer {
  readonly stats: DnsStats = { queries: 0, answered: 0, dropped: 0, malformed: 0 };
  private constructor(private readonly socket: dgram.Socket, readonly address: string, readonly port: number) {}

  static async listen(web: WebGraph, port: number, address = '127.0.0.1', extra?: ExtraDnsRecords): Promise<SimDnsServer> {
    const socket = dgram.createSocket({ type: 'udp4' });
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => { socket.off('error', reject); resolve(); });
    });
    const srv = new SimDnsServer(socket, address, socket.address().port);
    socket.on('error', () => { /* ICMP unreachable and the like: a UDP server keeps going */ });
    socket.on('message', (msg, rinfo) => {
      srv.stats.queries++;
      let reply: Buffer | null;
      try {
        reply = (extra !== undefined && extra.size > 0 ? extraAnswer(extra, msg) : null) ?? answerQuery(web, msg);
      } catch {
        reply = null;
      }
      if (!reply) { srv.stats.dropped++; return; }
      if ((reply.readUInt16BE(2) & 0xf) === RCODE_FORMERR) srv.stats.malformed++;
      srv.stats.answered++;
      socket.send(reply, rinfo.port, rinfo.address);
    });
    return srv;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
