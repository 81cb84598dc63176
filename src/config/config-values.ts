/**
 * The value checks behind resolveCrawlConfig (config.ts): sizes, durations, integers, strings,
 * enumerations, DNS server addresses and networks. Each throws CRAWL_CONFIG_INVALID naming the key
 * and the value it got, so bad input ends with one clear message (docs/errors.md).
 */
import net from 'node:net';
import { CrawlError } from '../errors.js';
import { networkPredicate } from '../fetch/limits.js';

export const CRAWL_CONFIG_INVALID = 'CRAWL_CONFIG_INVALID';
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export function invalid(key: string, message: string, value?: unknown): CrawlError {
  return new CrawlError(CRAWL_CONFIG_INVALID, `${key} ${message}`, { details: { key, value } });
}

/**
 * Parse a byte size: a plain number of bytes, or a number with a binary unit
 * (`K`, `M`, `G`, `T`, optionally followed by `B` or `iB`, any case): `1.5G` = 1.5 × 2^30.
 */
export function parseSize(input: string | number, key = 'size'): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw invalid(key, 'must be a non-negative number of bytes', input);
    return Math.floor(input);
  }
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([kmgt]?)(i?b)?\s*$/i.exec(input);
  if (!m) throw invalid(key, `must be a size like 512M, 1.5G or 1048576 (got ${JSON.stringify(input)})`, input);
  const unit = (m[2] ?? '').toLowerCase();
  if (unit === '' && m[3] !== undefined && m[3].toLowerCase() === 'ib') {
    throw invalid(key, `must be a size like 512M, 1.5G or 1048576 (got ${JSON.stringify(input)})`, input);
  }
  const mult = unit === 'k' ? 1024 : unit === 'm' ? MiB : unit === 'g' ? GiB : unit === 't' ? 1024 * GiB : 1;
  return Math.floor(Number(m[1]) * mult);
}

/**
 * Parse a duration in seconds (the CLI's unit for --max-time): `90`, `1.5`, or with a unit
 * `500ms`, `30s`, `10m`, `2h`. Returns milliseconds.
 */
export function parseDurationMs(input: string | number, key = 'duration', defaultUnit: 's' | 'ms' = 's'): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw invalid(key, 'must be a non-negative duration', input);
    return Math.round(defaultUnit === 's' ? input * 1000 : input);
  }
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h)?\s*$/i.exec(input);
  if (!m) throw invalid(key, `must be a duration like 30, 30s, 500ms, 10m or 2h (got ${JSON.stringify(input)})`, input);
  const unit = (m[2] ?? defaultUnit).toLowerCase();
  const mult = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
  return Math.round(Number(m[1]) * mult);
}

export function nonNegInt(key: string, v: unknown, { nullable = false, min = 0 } = {}): number | null {
  if (v === null && nullable) return null;
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) v = Number(v);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw invalid(key, `must be ${min > 0 ? 'a positive' : 'a non-negative'} integer${nullable ? ' or null' : ''} (got ${JSON.stringify(v)})`, v);
  }
  return v;
}

export function positiveNumber(key: string, v: unknown, max: number): number {
  if (typeof v === 'string' && /^\s*(\d+(\.\d*)?|\.\d+)(e-?\d+)?\s*$/i.test(v)) v = Number(v);
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > max) {
    throw invalid(key, `must be a number above 0 and at most ${max} (got ${JSON.stringify(v)})`, v);
  }
  return v;
}

export function str(key: string, v: unknown, { empty = false } = {}): string {
  if (typeof v !== 'string' || (!empty && v.trim() === '')) throw invalid(key, `must be a non-empty string (got ${JSON.stringify(v)})`, v);
  return v;
}

export function strList(key: string, v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalid(key, 'must be a list of strings', v);
  return [...(v as string[])];
}

export function oneOf<T extends string>(key: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw invalid(key, `must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`, v);
  }
  return v as T;
}

export function bool(key: string, v: unknown): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw invalid(key, `must be true or false (got ${JSON.stringify(v)})`, v);
}

export function hostPort(key: string, v: string): string {
  // ip:port, [v6]:port, or a bare IP (port 53). An IP literal: node's resolver takes nothing else
  // (a name would need a resolver to find the resolver).
  const t = v.trim();
  if (net.isIPv6(t)) return `[${t}]:53`;
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:\s]+))(?::(\d{1,5}))?$/i.exec(t);
  const ok = m !== null && (m[3] === undefined || (Number(m[3]) >= 1 && Number(m[3]) <= 65535)) &&
    (m[1] !== undefined ? net.isIPv6(m[1]) : net.isIPv4(m[2]!));
  if (!ok) throw invalid(key, `entries must be an IP address with an optional port, like 127.0.0.1:5353 or [::1]:53 (got ${JSON.stringify(v)})`, v);
  const port = m[3] ?? '53';
  return m[1] !== undefined ? `[${m[1]}]:${port}` : `${m[2]!}:${port}`;
}

export function cidr(key: string, v: string): string {
  const t = v.trim();
  try {
    networkPredicate([t]);
  } catch {
    throw invalid(key, `entries must be IP networks like 10.0.0.0/8, 127.0.0.2/32 or fd00::/8 (got ${JSON.stringify(v)})`, v);
  }
  return t;
}

/** A zstd compression level, 1–22. */
export function zstdLevel(v: unknown): number {
  const n = nonNegInt('warcZstdLevel', v, { min: 1 })!;
  if (n > 22) throw invalid('warcZstdLevel', `must be an integer from 1 to 22 (got ${n})`, n);
  return n;
}
