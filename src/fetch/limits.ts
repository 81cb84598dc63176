/**
 * Small pure helpers of the fetcher: address policy, header value parsing, content decoding with a
 * hard output cap. Kept apart from fetcher.ts so each is testable on its own.
 */
import { BlockList, isIP } from 'node:net';
import zlib from 'node:zlib';

/** Loopback only: what tests and the embedded simweb demo use. */
export const LOOPBACK_NETWORKS: readonly string[] = Object.freeze(['127.0.0.0/8', '::1/128']);

/**
 * An IPv4 dotted quad (as `isIP` accepts it: four decimal octets) as an unsigned 32-bit number.
 * The fetcher checks every connection's address against up to 17 IPv4 networks; `BlockList.check`
 * builds a `SocketAddress` (a native object) on each call, this only splits the string
 * (docs/performance.md, "Main thread").
 */
export function ipv4Number(ip: string): number {
  let n = 0;
  let octet = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 46 /* . */) {
      n = n * 256 + octet;
      octet = 0;
    } else octet = octet * 10 + (c - 48);
  }
  return n * 256 + octet;
}

/** An IPv4 network as numbers: `ipv4Number(ip) & mask === net` for the addresses inside it. */
export interface Ipv4Net {
  net: number;
  mask: number;
}

/** `a.b.c.d` and a prefix length (0–32) as an Ipv4Net. */
export function ipv4Net(addr: string, bits: number): Ipv4Net {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { net: (ipv4Number(addr) & mask) >>> 0, mask };
}

/** Is the IPv4 address (as ipv4Number) inside the network? */
export function inIpv4Net(n: number, r: Ipv4Net): boolean {
  return ((n & r.mask) >>> 0) === r.net;
}

/**
 * A predicate over IP literals built from CIDR strings (`10.0.0.0/8`, `::1/128`, or a bare IP).
 * Each family is judged by its own rules only: an IPv4 address by the IPv4 networks (arithmetic),
 * an IPv6 address by the IPv6 networks (a BlockList holding IPv6 subnets only). node's BlockList
 * alone would cross families (an IPv6 rule `::/0` or `::ffff:0:0/96` matches every IPv4 address,
 * an IPv4 rule matches IPv4-mapped IPv6 addresses); the network guard (address-guard.ts) turns an
 * IPv6 address that carries an IPv4 address into that IPv4 address before asking.
 */
export function networkPredicate(cidrs: readonly string[]): (ip: string) => boolean {
  const bl = new BlockList();
  const v4: Ipv4Net[] = [];
  let v6Rules = false;
  for (const c of cidrs) {
    const slash = c.indexOf('/');
    const addr = slash < 0 ? c : c.slice(0, slash);
    const fam = isIP(addr);
    if (fam === 0) throw new TypeError(`allowedNetworks: not an IP network: ${c}`);
    const bitsText = slash < 0 ? '' : c.slice(slash + 1);
    if (slash >= 0 && !/^[0-9]{1,3}$/.test(bitsText)) throw new TypeError(`allowedNetworks: bad prefix: ${c}`);
    const bits = slash < 0 ? (fam === 4 ? 32 : 128) : Number(bitsText);
    if (!Number.isInteger(bits) || bits < 0 || bits > (fam === 4 ? 32 : 128)) throw new TypeError(`allowedNetworks: bad prefix: ${c}`);
    if (fam === 4) v4.push(ipv4Net(addr, bits));
    else {
      bl.addSubnet(addr, bits, 'ipv6');
      v6Rules = true;
    }
  }
  return (ip: string): boolean => {
    const fam = isIP(ip);
    if (fam === 4) {
      const n = ipv4Number(ip);
      for (const r of v4) if (inIpv4Net(n, r)) return true;
      return false;
    }
    return fam === 6 && v6Rules && bl.check(ip, 'ipv6');
  };
}

/**
 * Largest Retry-After honoured (1 h, the frontier's longest host wait, maxBackoffMs): a server
 * asking for longer is asked again after an hour, and the policy's maxRetries decides how often.
 */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date; ms from `now`, clamped to [0, MAX_RETRY_AFTER_MS]. */
export function parseRetryAfter(v: string | undefined, now: number): number | undefined {
  if (v === undefined) return undefined;
  const s = v.trim();
  if (s.length === 0) return undefined;
  let ms: number;
  if (/^[0-9]+$/.test(s)) ms = Number(s) * 1000;
  else {
    const t = Date.parse(s);
    if (Number.isNaN(t)) return undefined;
    ms = t - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** `text/html; charset="UTF-8"` → { type: 'text/html', charset: 'utf-8' }. */
export function parseContentType(v: string | undefined): { type?: string; charset?: string } {
  if (v === undefined) return {};
  const semi = v.indexOf(';');
  const type = (semi < 0 ? v : v.slice(0, semi)).trim().toLowerCase();
  let charset: string | undefined;
  if (semi >= 0) {
    const m = /(?:^|;)\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(v.slice(semi));
    if (m) charset = m[2]!.toLowerCase();
  }
  return type.length > 0 ? { type, charset } : { charset };
}

export type DecodeResult =
  | { ok: true; decoded: Uint8Array }
  | { ok: false; reason: 'bomb' | 'decode' | 'aborted'; detail: string };

/**
 * Where decoded bytes are counted (the body budget, memory-budget.ts): `take` resolves true once
 * `bytes` more are granted (false: the fetch was aborted while it waited), `give` returns bytes.
 */
export interface DecodeMemory {
  take(bytes: number): Promise<boolean> | boolean;
  give(bytes: number): void;
}

/** What zlib's convenience functions return with `info: true`. */
interface Decoded { buffer: Buffer; engine: { bytesWritten: number } }

/**
 * Above this many compressed bytes (decodeContent's `syncMax`, by default), or this many expected
 * decoded bytes, decode on the libuv thread pool instead of the calling thread.
 */
export const SYNC_DECODE_MAX = 256 * 1024;
const SYNC_DECODED_MAX = 2 * 1024 * 1024;
/** Decoded size expected per compressed byte when the stream does not say (deflate, brotli, a cut gzip). */
const RATIO_GUESS = 16;
/** Smallest decoded size expected (one allocation for every small page). */
const MIN_EXPECTED = 64 * 1024;

function decoderFor(enc: string, input: Uint8Array): 'gunzip' | 'inflate' | 'inflateRaw' | 'brotliDecompress' | null {
  switch (enc) {
    case 'gzip': case 'x-gzip': return 'gunzip';
    case 'br': return 'brotliDecompress';
    case 'deflate': {
      // "deflate" is meant to be zlib-wrapped (RFC 9110 §8.4.1.2) but many servers send raw deflate.
      const b0 = input[0] ?? 0;
      const b1 = input[1] ?? 0;
      return (b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0 ? 'inflate' : 'inflateRaw';
    }
    default: return null;
  }
}

/**
 * The decoded size to allocate first: a complete gzip stream states it (ISIZE, its last four bytes,
 * for its last member: a hint, which a server may get wrong); otherwise RATIO_GUESS × the input.
 */
function expectedSize(fn: string, data: Uint8Array, truncated: boolean, maxOut: number): number {
  let e = data.length * RATIO_GUESS;
  if (fn === 'gunzip' && !truncated && data.length >= 18) {
    const n = data.length;
    const isize = (data[n - 4]! | (data[n - 3]! << 8) | (data[n - 2]! << 16) | (data[n - 1]! << 24)) >>> 0;
    if (isize >= data.length / 2) e = isize; // below that it is not a single member's true size
  }
  return Math.min(maxOut, Math.max(MIN_EXPECTED, e));
}

function inflate(fn: 'gunzip' | 'inflate' | 'inflateRaw' | 'brotliDecompress', data: Uint8Array, opts: zlib.ZlibOptions & zlib.BrotliOptions, sync: boolean): Promise<Decoded> | Decoded {
  if (sync) return zlib[`${fn}Sync`](data, opts) as unknown as Decoded;
  return new Promise<Decoded>((resolve, reject) => {
    const cb = (err: Error | null, res: Buffer): void => (err ? reject(err) : resolve(res as unknown as Decoded));
    if (fn === 'gunzip') zlib.gunzip(data, opts, cb);
    else if (fn === 'inflate') zlib.inflate(data, opts, cb);
    else if (fn === 'inflateRaw') zlib.inflateRaw(data, opts, cb);
    else zlib.brotliDecompress(data, opts, cb);
  });
}

/**
 * Undo Content-Encoding (or a transfer-coding; applied in reverse order). Output is capped at
 * `maxOut` bytes: zlib stops as soon as the cap is passed (maxOutputLength), so a bomb costs at
 * most `maxOut` of memory. A complete body must be a complete stream: bytes that merely start like
 * one (random bytes labelled `br` often do) end in a decode error. A `truncated` body (cut at
 * maxBodyBytes or by a timeout) is decoded as far as it goes (`Z_SYNC_FLUSH` /
 * `BROTLI_OPERATION_FLUSH` as finish flush).
 *
 * Memory: each layer's output is one buffer of the expected size (zlib's chunkSize: no list of
 * 16 KiB pieces concatenated at the end, which would hold the output twice), taken from `mem`
 * before it is allocated; when the output turns out larger, the layer is decoded again into a
 * buffer of `maxOut`. An output much smaller than its buffer is copied to its own size. A layer's
 * input is given back once the next layer is decoded from it (the body itself is the caller's).
 */
export async function decodeContent(body: Uint8Array, encodings: readonly string[], maxOut: number, truncated = false, mem?: DecodeMemory, syncMax = SYNC_DECODE_MAX): Promise<DecodeResult> {
  let data = body;
  let dataHeld = 0; // bytes `mem` counts for `data` (0: the caller's body)
  for (let i = encodings.length - 1; i >= 0; i--) {
    const enc = encodings[i]!;
    if (enc === 'identity') continue;
    const fn = decoderFor(enc, data);
    if (fn === null) return { ok: false, reason: 'decode', detail: `unsupported content-encoding ${enc}` };
    if (data.length === 0) continue;
    let expect = expectedSize(fn, data, truncated, maxOut);
    let out: Decoded | null = null;
    let held = 0;
    for (;;) {
      // chunkSize one above the expected size: a stream that fits comes out as one buffer.
      if (mem !== undefined) {
        if (!(await mem.take(expect + 1))) {
          if (dataHeld > 0) mem.give(dataHeld);
          return { ok: false, reason: 'aborted', detail: 'aborted while waiting for memory' };
        }
        held = expect + 1;
      }
      // `info: true` reports the bytes the decoder consumed: a complete body must be consumed to its
      // end (trailing bytes after a finished stream mean the body was not this encoding).
      const base = { maxOutputLength: expect, chunkSize: Math.max(64, expect + 1), info: true };
      const opts = (!truncated ? base
        : fn === 'brotliDecompress' ? { ...base, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }
          : { ...base, finishFlush: zlib.constants.Z_SYNC_FLUSH }) as zlib.ZlibOptions & zlib.BrotliOptions;
      try {
        out = await inflate(fn, data, opts, data.length <= syncMax && expect <= SYNC_DECODED_MAX);
        break;
      } catch (err) {
        if (mem !== undefined) mem.give(held);
        held = 0;
        const code = (err as { code?: string }).code;
        const tooLarge = code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError;
        if (tooLarge && expect < maxOut) {
          expect = maxOut; // the hint was short: once more, into a buffer of the cap
          continue;
        }
        if (mem !== undefined && dataHeld > 0) mem.give(dataHeld);
        if (tooLarge) return { ok: false, reason: 'bomb', detail: `decoded size exceeds ${maxOut} bytes` };
        return { ok: false, reason: 'decode', detail: `${enc}: ${(err as Error).message}` };
      }
    }
    if (!truncated && out.engine.bytesWritten < data.length) {
      if (mem !== undefined) mem.give(held + dataHeld);
      return { ok: false, reason: 'decode', detail: `${enc}: ${data.length - out.engine.bytesWritten} bytes after the end of the stream` };
    }
    let next: Uint8Array = out.buffer;
    if (next.buffer.byteLength > 2 * next.byteLength + 4096) {
      // much smaller than expected: keep a copy of its own size, give the rest back
      next = Uint8Array.prototype.slice.call(next);
      if (mem !== undefined) {
        mem.give(held - next.byteLength);
        held = next.byteLength;
      }
    }
    if (mem !== undefined && dataHeld > 0) mem.give(dataHeld);
    data = next;
    dataHeld = held;
  }
  return { ok: true, decoded: data };
}
