/**
 * DNS answers as WARC records, in the form Heritrix writes them (heritrix3:
 * modules/.../fetcher/FetchDNS.java getDNSRecord, modules/.../warc/DnsResponseRecordBuilder.java):
 *
 *   WARC-Type: response
 *   WARC-Target-URI: dns:<host>
 *   WARC-IP-Address: <the DNS server asked>
 *   Content-Type: text/dns
 *
 * and a block of the lookup's 14-digit start time (RFC 2540's date format), LF, then one line per
 * resource record as dnsjava's Record.toString() prints it — `<name>.`, tab-padded to 16 columns,
 * TAB, TTL, TAB, `IN`, TAB, type, TAB, address — each followed by LF. The block is not HTTP: its
 * payload digest is over the whole block. Readers (warcio, pywb) treat `dns:` response records as
 * non-HTTP by their URI scheme.
 */
import { buildRecord, compressRecord, newRecordId, sha1Digest, warcDate, type EncodeOptions, type EncodedGroup } from './warc-record.js';

export interface DnsAnswerInput {
  host: string;
  /** when the query was sent */
  date: Date;
  /** the DNS server that answered (`ip` or `ip:port`; the port is not written) */
  server: string;
  /** the answer's records: A (IPv4) or AAAA (IPv6) addresses with their TTL, seconds */
  records: readonly { address: string; ttl: number }[];
  warcinfoId?: string;
}

/** `yyyyMMddHHmmss` UTC. */
function date14(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** dnsjava's Record.toString() for an A/AAAA record of class IN. */
export function dnsRecordLine(host: string, r: { address: string; ttl: number }): string {
  let s = host.endsWith('.') ? host : host + '.';
  if (s.length < 8) s += '\t';
  if (s.length < 16) s += '\t';
  return `${s}\t${r.ttl}\tIN\t${r.address.includes(':') ? 'AAAA' : 'A'}\t${r.address}`;
}

/** The block of a DNS record (see the top comment). */
export function dnsBlock(x: Pick<DnsAnswerInput, 'host' | 'date' | 'records'>): Uint8Array {
  let s = date14(x.date) + '\n';
  for (const r of x.records) s += dnsRecordLine(x.host, r) + '\n';
  return Buffer.from(s, 'utf8');
}

/** The address part of `ip`, `ip:port`, `[v6]:port` or a bare v6 address. */
function serverAddress(server: string): string {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(server);
  if (m !== null) return m[1]!;
  const colons = server.split(':').length - 1;
  return colons === 1 ? server.slice(0, server.indexOf(':')) : server;
}

/** One compressed `dns:` response record, as a group of one (WarcWriter.appendEncoded). */
export function encodeDnsRecord(x: DnsAnswerInput, opts?: EncodeOptions): EncodedGroup {
  const id = newRecordId();
  const block = dnsBlock(x);
  const digest = sha1Digest(block);
  const fields: [string, string][] = [
    ['WARC-Type', 'response'],
    ['WARC-Record-ID', id],
    ['WARC-Date', warcDate(x.date)],
    ['WARC-Target-URI', `dns:${x.host}`],
  ];
  const ip = serverAddress(x.server);
  if (ip !== '') fields.push(['WARC-IP-Address', ip]);
  if (x.warcinfoId !== undefined) fields.push(['WARC-Warcinfo-ID', x.warcinfoId]);
  fields.push(['Content-Type', 'text/dns'], ['WARC-Payload-Digest', digest]);
  const data = compressRecord(buildRecord(fields, [block]), opts);
  return { data, records: [{ type: 'response', recordId: id, offset: 0, length: data.length }], recordId: id, payloadDigest: digest };
}
