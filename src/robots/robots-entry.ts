/**
 * A RobotsCache value (thesis VII.1, Fig. 2): what the crawler keeps of one host's robots.txt
 * answer — the compiled rules as RobotsRules.serialize() writes them (Crawl-delay included), the
 * outcome ('ok' or a CRAWL_ROBOTS_* code), when the answer expires, and the Sitemap URLs it named.
 *
 * Layout (varints are unsigned LEB128):
 *   u8 version (= 1) · f64 LE expiresAt (ms since the epoch) · varint outcome length · outcome
 *   (ASCII) · varint rules length · rules bytes · varint sitemap count · count × (varint length ·
 *   UTF-8 bytes)
 * At most MAX_SITEMAPS sitemap URLs of at most MAX_SITEMAP_BYTES each are kept, so an entry stays
 * small whatever a robots.txt lists (the rules themselves are bounded by the robots body cap).
 */
import { CrawlError } from '../errors.js';
import { deserializeRobotsRules, type RobotsRules } from './rules.js';

export interface RobotsEntry {
  rules: RobotsRules;
  /** 'ok' | CRAWL_ROBOTS_UNAVAILABLE | CRAWL_ROBOTS_UNREACHABLE | CRAWL_ROBOTS_REDIRECT_LIMIT */
  outcome: string;
  expiresAt: number;
  sitemaps: readonly string[];
}

const VERSION = 1;
export const MAX_SITEMAPS = 16;
export const MAX_SITEMAP_BYTES = 2048;

const enc = new TextEncoder();
const dec = new TextDecoder();

function putVarint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

export function encodeRobotsEntry(e: RobotsEntry): Uint8Array {
  const head: number[] = [VERSION];
  const t = new Uint8Array(8);
  new DataView(t.buffer).setFloat64(0, e.expiresAt, true);
  head.push(...t);
  const outcome = enc.encode(e.outcome);
  putVarint(head, outcome.length);
  head.push(...outcome);
  const rules = e.rules.serialize();
  putVarint(head, rules.length);
  const tail: number[] = [];
  const maps = e.sitemaps.map((s) => enc.encode(s)).filter((b) => b.length <= MAX_SITEMAP_BYTES).slice(0, MAX_SITEMAPS);
  putVarint(tail, maps.length);
  let size = head.length + rules.length + tail.length;
  for (const m of maps) size += m.length + 3;
  const out = new Uint8Array(size);
  out.set(head, 0);
  out.set(rules, head.length);
  let o = head.length + rules.length;
  out.set(tail, o);
  o += tail.length;
  for (const m of maps) {
    const l: number[] = [];
    putVarint(l, m.length);
    out.set(l, o);
    o += l.length;
    out.set(m, o);
    o += m.length;
  }
  return out.slice(0, o);
}

/** Decodes encodeRobotsEntry's bytes; CRAWL_ROBOTS_BAD_SERIALIZED on malformed input. */
export function decodeRobotsEntry(b: Uint8Array): RobotsEntry {
  let o = 0;
  const bad = (): never => {
    throw new CrawlError('CRAWL_ROBOTS_BAD_SERIALIZED', `malformed RobotsCache entry at byte ${o}`);
  };
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 5; i++) {
      if (o >= b.length) bad();
      const x = b[o++]!;
      v += (x & 0x7f) * mul;
      if (x < 0x80) return v;
      mul *= 128;
    }
    return bad();
  };
  const bytes = (n: number): Uint8Array => {
    if (o + n > b.length) bad();
    const s = b.subarray(o, o + n);
    o += n;
    return s;
  };
  if (b.length < 9 || b[0] !== VERSION) bad();
  const expiresAt = new DataView(b.buffer, b.byteOffset + 1, 8).getFloat64(0, true);
  o = 9;
  const outcome = dec.decode(bytes(varint()));
  const rules = deserializeRobotsRules(bytes(varint()));
  const n = varint();
  if (n > MAX_SITEMAPS) bad();
  const sitemaps: string[] = [];
  for (let i = 0; i < n; i++) sitemaps.push(dec.decode(bytes(varint())));
  if (o !== b.length) bad();
  return { rules, outcome, expiresAt, sitemaps };
}
