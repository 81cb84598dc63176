/**
 * The DNS cache's answers saved with each checkpoint (`<stateDir>/dns-cache`) and loaded by the
 * resume, so that a resumed crawl does not ask its DNS servers again what it learnt before it was
 * stopped or killed (Heritrix keeps its hosts' addresses in its checkpointed server cache too).
 *
 * Why: the host table starts empty at a resume, so every host with URLs in RAM at the last
 * checkpoint asks for its robots answer again; each RobotsCache hit then waited for a DNS query.
 * Over 10^7 hosts that was ~90,000 queries behind a queue of up to 40,000 lookups, and no page
 * entered RAM for 10 s (docs/performance.md, the hour over 10^7 hosts).
 *
 * The file is a cache, not crawl state: written whole and atomically after the checkpoint's
 * manifest, it may be older than the manifest or missing (a kill before the first checkpoint), and
 * what this code cannot read — another version, a line whose CRC-32 does not match (a flipped bit
 * must not send a host's requests to another address), a bad address — is passed over line by
 * line, never an error. Entries keep their absolute expiry (wall-clock ms): one that expired
 * while the crawl was stopped is not loaded.
 *
 * Format (UTF-8 text): the line `drumcrawl-dns 1`, then one line per entry, least recently used first, each
 * `<CRC-32 of the rest of the line, 8 hex digits>\t` followed by
 *   `<expiresAt ms>\t<host>\t<ip>\t<address>,<address>…`   an answer (ip is one of the addresses)
 *   `<expiresAt ms>\t<host>\t!\t<CRAWL_DNS_* code>`          a cached failure
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { crc32 } from 'node:zlib';

export const DNS_CACHE_FILE = 'dns-cache';
const HEADER = 'drumcrawl-dns 1';
/** Entries encoded or decoded per turn of the event loop (~5–8 ms at 4,096 on this box). */
const SLICE = 4096;

/** One cached answer or failure, as the DNS cache holds it. */
export interface DnsFileEntry {
  host: string;
  expiresAt: number;
  ip: string | null;
  addresses: readonly string[];
  error: string | null;
}

/** Characters a host name in the file may not hold (they would break its lines). */
const UNSAFE = /[\t\n\r,\s]/;

/** The file's text for `entries` (in the order given: least recently used first). */
export function encodeDnsFile(entries: Iterable<DnsFileEntry>): string {
  const lines = [HEADER];
  for (const e of entries) encodeLine(e, lines);
  return lines.join('\n') + '\n';
}

/**
 * encodeDnsFile a slice of entries per turn of the event loop (44,032 entries took 45–65 ms in one
 * piece, a pause of the crawl at every checkpoint). `entries` must not change meanwhile: a copy.
 */
export async function encodeDnsFileSliced(entries: readonly DnsFileEntry[]): Promise<string> {
  const lines = [HEADER];
  for (let i = 0; i < entries.length; i += SLICE) {
    for (let j = i; j < Math.min(entries.length, i + SLICE); j++) encodeLine(entries[j]!, lines);
    await turn();
  }
  return lines.join('\n') + '\n';
}

function encodeLine(e: DnsFileEntry, lines: string[]): void {
  if (e.host.length === 0 || UNSAFE.test(e.host)) return;
  const body = e.ip !== null ? `${e.expiresAt}\t${e.host}\t${e.ip}\t${e.addresses.join(',')}` : e.error !== null ? `${e.expiresAt}\t${e.host}\t!\t${e.error}` : null;
  if (body !== null) lines.push(`${hex8(crc32(body))}\t${body}`);
}

/**
 * The entries of a file's text that have not expired at `now`, in the file's order; lines it cannot read
 * are passed over (counted in `skipped`). A text without the header yields nothing.
 */
export function decodeDnsFile(text: string, now: number): { entries: DnsFileEntry[]; skipped: number } {
  const entries: DnsFileEntry[] = [];
  let skipped = 0;
  const lines = text.split('\n');
  if (lines[0] !== HEADER) return { entries, skipped: lines.length };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length === 0) continue;
    const e = decodeLine(line);
    if (e === null) skipped++;
    else if (e.expiresAt > now) entries.push(e);
  }
  return { entries, skipped };
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

function decodeLine(line: string): DnsFileEntry | null {
  const tab = line.indexOf('\t');
  if (tab !== 8 || line.slice(0, 8) !== hex8(crc32(line.slice(9)))) return null;
  const f = line.slice(9).split('\t');
  if (f.length !== 4) return null;
  const expiresAt = Number(f[0]);
  const host = f[1]!;
  if (!Number.isSafeInteger(expiresAt) || host.length === 0 || host.length > 253 || UNSAFE.test(host)) return null;
  if (f[2] === '!') {
    return /^CRAWL_DNS_[A-Z_]+$/.test(f[3]!) ? { host, expiresAt, ip: null, addresses: [], error: f[3]! } : null;
  }
  const ip = f[2]!;
  const addresses = f[3]!.split(',');
  if (isIP(ip) === 0 || !addresses.includes(ip) || addresses.some((a) => isIP(a) === 0)) return null;
  return { host, expiresAt, ip, addresses, error: null };
}

/**
 * The entries of the file at `file` not expired at `now` (decodeDnsFile); none when it is missing
 * or cannot be read — the resume then asks the DNS servers, as a new crawl does.
 */
export async function readDnsFile(file: string, now: number): Promise<{ entries: DnsFileEntry[]; skipped: number }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return { entries: [], skipped: 0 };
  }
  return decodeDnsFile(text, now);
}


/**
 * Loads the saved answers at `file` into a cache (through `load`, which keeps at most `capacity`),
 * a slice of lines per turn of the event loop, so that a resume does not wait for it: decoding
 * 44,032 lines takes 70–110 ms, which held the first request back when done in one piece. Lookups
 * made meanwhile are not disturbed (a host already cached keeps its entry). Returns the entries
 * taken in; a file that cannot be read loads nothing.
 */
export async function loadDnsFile(file: string, cache: { load(entries: readonly DnsFileEntry[]): number; readonly capacity: number }, now: () => number): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return 0;
  }
  const lines = text.split('\n');
  if (lines[0] !== HEADER) return 0;
  if (lines[lines.length - 1] === '') lines.pop();
  // The most recently used entries are last; only the last `capacity` lines can be kept.
  let taken = 0;
  for (let i = Math.max(1, lines.length - cache.capacity); i < lines.length; i += SLICE) {
    const slice: DnsFileEntry[] = [];
    const t = now();
    for (let j = i; j < Math.min(lines.length, i + SLICE); j++) {
      const e = lines[j]!.length > 0 ? decodeLine(lines[j]!) : null;
      if (e !== null && e.expiresAt > t) slice.push(e);
    }
    taken += cache.load(slice);
    await turn();
  }
  return taken;
}
