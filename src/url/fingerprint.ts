/**
 * 64-bit keys for DRUM (IRLbot thesis ch. IV: URLseen and the PLD/host tables are keyed
 * by 8-byte hashes).
 *
 * KEY DEFINITION (persisted on disk — never change it without a migration):
 *   key(s) = XXH64(UTF-8 bytes of s, seed 0), as an unsigned 64-bit integer;
 *   hi = key >>> 32 (upper 32 bits), lo = key & 0xffffffff.
 * - URL key:  s = the canonical URL (canonicalizeUrl's output; ASCII).
 * - host key: s = hostOf(canonical URL)  (lower-case ASCII host, no port, IPv6 in brackets).
 * - PLD key:  s = pldOrHost(host) with the ICANN-only list (STAR's grouping).
 *
 * Implementation: the XXH64 WebAssembly of xxhash-wasm (its `workerd/xxhash.wasm`, the same code
 * its JS API wraps), instantiated here with a 66-byte wrapper module that calls `xxh64` and stores
 * the i64 result in linear memory. JavaScript then reads two uint32 — no BigInt is created on the
 * hot path (xxhash-wasm's own `h64` returns a BigInt and masks it with another BigInt op). The
 * string's UTF-8 bytes are written into wasm memory with TextEncoder.encodeInto.
 * If the .wasm file cannot be found, xxhash-wasm's `h64` is used instead (same results, slower).
 * test/url/units.test.ts checks both give the same keys, and the XXH64 reference vectors.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import xxhash from 'xxhash-wasm';
import { hostOf } from './host.js';
import { pldOrHost } from './pld.js';

const { h64 } = await xxhash();

// Wrapper module: (import "e" "h" (func (param i32 i32 i64) (result i64)))
// (import "e" "m" (memory 1)) (func (export "s") (param i32 i32)
//   i32.const 0  local.get 0  local.get 1  i64.const 0  call 0  i64.store)
const WRAPPER = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x0d, 0x02, 0x60, 0x03, 0x7f, 0x7f, 0x7e, 0x01, 0x7e, 0x60, 0x02, 0x7f, 0x7f, 0x00, // types
  0x02, 0x0e, 0x02, 0x01, 0x65, 0x01, 0x68, 0x00, 0x00, 0x01, 0x65, 0x01, 0x6d, 0x02, 0x00, 0x01, // imports
  0x03, 0x02, 0x01, 0x01, // function 1: type 1
  0x07, 0x05, 0x01, 0x01, 0x73, 0x00, 0x01, // export "s"
  0x0a, 0x11, 0x01, 0x0f, 0x00, 0x41, 0x00, 0x20, 0x00, 0x20, 0x01, 0x42, 0x00, 0x10, 0x00, 0x37, 0x03, 0x00, 0x0b, // code
]);

// WebAssembly is a global in Node, but not in the ES2023 lib typings this project compiles with.
interface WasmMemory { readonly buffer: ArrayBuffer; grow(pages: number): number }
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const INPUT = 8; // input bytes start here; the result (i64, little-endian) is stored at 0

interface Native { run: (ptr: number, len: number) => void; mem: WasmMemory }

function loadNative(): Native | null {
  try {
    const pkgMain = createRequire(import.meta.url).resolve('xxhash-wasm');
    const wasmPath = path.join(path.dirname(pkgMain), '..', 'workerd', 'xxhash.wasm');
    const core = new WA.Instance(new WA.Module(readFileSync(wasmPath)), {});
    const mem = core.exports.mem as WasmMemory;
    const wrap = new WA.Instance(new WA.Module(WRAPPER), { e: { h: core.exports.xxh64, m: mem } });
    return { run: wrap.exports.s as (ptr: number, len: number) => void, mem };
  } catch {
    return null;
  }
}

const native = loadNative();
const encoder = new TextEncoder();
// Hoisted so the hot path does no property loads on `native`. The views are re-created only when
// the memory grows (growing detaches the old ArrayBuffer).
const run = native === null ? null : native.run;
let input = native === null ? new Uint8Array(0) : new Uint8Array(native.mem.buffer, INPUT);
let result = native === null ? new Uint32Array(2) : new Uint32Array(native.mem.buffer, 0, 2);

/** Makes `input` at least `bytes` long. Memory only grows, bounded by the longest string hashed. */
function ensureInput(mem: WasmMemory, bytes: number): void {
  const need = INPUT + bytes - mem.buffer.byteLength;
  if (need > 0) mem.grow(Math.ceil(need / 65536));
  input = new Uint8Array(mem.buffer, INPUT);
  result = new Uint32Array(mem.buffer, 0, 2);
}

// Fallback split of h64's BigInt without BigInt arithmetic.
const big = new BigUint64Array(1);
const halves = new Uint32Array(big.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = LITTLE_ENDIAN ? 0 : 1;

/**
 * Writes key(s) as out[offset] = hi, out[offset + 1] = lo, without BigInt.
 *
 * TextEncoder.encodeInto writes the UTF-8 bytes into wasm memory. Measured and rejected (docs/url.md,
 * "Performance"): storing the char codes of ASCII strings from a JS loop (fingerprintOnly fell from
 * ~4.6 M/s to ~2.3 M/s), and hashing `prefix + link` results from their two parts to avoid
 * flattening the cons string (no gain in `full`).
 */
export function fingerprintInto(s: string, out: Uint32Array, offset: number): void {
  if (run === null) {
    big[0] = h64(s);
    out[offset] = halves[HI]!;
    out[offset + 1] = halves[LO]!;
    return;
  }
  // UTF-8 needs at most 3 bytes per UTF-16 code unit.
  if (s.length * 3 > input.length) ensureInput(native!.mem, s.length * 3);
  run(INPUT, encoder.encodeInto(s, input).written);
  out[offset] = result[HI]!;
  out[offset + 1] = result[LO]!;
}

/** Batches longer than this (UTF-16 units) are hashed string by string; bounds the wasm memory. */
const BATCH_MAX_CHARS = 1 << 16;

/**
 * Keys of `strings[i]` into out[offset + 2i] = hi, out[offset + 2i + 1] = lo, for every i — the
 * same values as fingerprintInto on each string.
 *
 * Why: TextEncoder.encodeInto is a C++ binding call whose fixed cost (~0.1 µs here, plus flattening
 * a freshly concatenated URL) is most of fingerprintInto's time on a ~60-character URL. A page's
 * links are known together, so they are joined (one native copy), encoded with ONE encodeInto, and
 * each string's byte range is hashed by a cheap JS → wasm call. When the joined text is not all
 * ASCII (UTF-8 offsets then differ from string offsets), or longer than BATCH_MAX_CHARS, each
 * string is hashed on its own.
 */
export function fingerprintManyInto(strings: readonly string[], out: Uint32Array, offset: number): void {
  const n = strings.length;
  if (n === 0) return;
  if (run === null || n === 1) {
    for (let i = 0; i < n; i++) fingerprintInto(strings[i]!, out, offset + 2 * i);
    return;
  }
  const joined = strings.join('');
  const len = joined.length;
  if (len <= BATCH_MAX_CHARS) {
    if (len * 3 > input.length) ensureInput(native!.mem, len * 3);
    if (encoder.encodeInto(joined, input).written === len) {
      let p = INPUT;
      for (let i = 0, o = offset; i < n; i++, o += 2) {
        const l = strings[i]!.length;
        run(p, l);
        out[o] = result[HI]!;
        out[o + 1] = result[LO]!;
        p += l;
      }
      return;
    }
  }
  for (let i = 0; i < n; i++) fingerprintInto(strings[i]!, out, offset + 2 * i);
}

/**
 * Keys of n strings already written as UTF-8 bytes end to end in bytes[start..): string i is the
 * next lens[i] bytes; its key goes to out[offset + i·stride] = hi, out[offset + i·stride + 1] = lo
 * — the same values as fingerprintInto on the strings. For a caller that has the bytes anyway (the
 * parse worker's link table holds every followed URL's text): one copy into wasm memory for all of
 * them instead of one TextEncoder call per string (the URL is then encoded once, not twice).
 */
export function fingerprintRunsInto(bytes: Uint8Array, start: number, lens: ArrayLike<number>, n: number, out: Uint32Array, offset: number, stride: number): void {
  let total = 0;
  for (let i = 0; i < n; i++) total += lens[i]!;
  if (run === null || total > BATCH_MAX_CHARS * 3) {
    // (fallback, or beyond the batch bound: each run decoded back and hashed alone)
    const dec = new TextDecoder();
    for (let i = 0, p = start; i < n; p += lens[i]!, i++) fingerprintInto(dec.decode(bytes.subarray(p, p + lens[i]!)), out, offset + i * stride);
    return;
  }
  if (total > input.length) ensureInput(native!.mem, total);
  input.set(bytes.subarray(start, start + total));
  let p = INPUT;
  for (let i = 0, o = offset; i < n; i++, o += stride) {
    const l = lens[i]!;
    run(p, l);
    out[o] = result[HI]!;
    out[o + 1] = result[LO]!;
    p += l;
  }
}

const pair = new Uint32Array(2);

/** XXH64 (seed 0) of the UTF-8 bytes of `s`, as a BigInt (cold paths). */
export function fingerprint64(s: string): bigint {
  fingerprintInto(s, pair, 0);
  return (BigInt(pair[0]!) << 32n) | BigInt(pair[1]!);
}

/** Key of a canonical URL (the caller canonicalizes first; this function does not). */
export function urlFingerprint(canonicalUrl: string): bigint {
  return fingerprint64(canonicalUrl);
}

/** xxhash-wasm's own h64 (reference for tests; same key definition). */
export function fingerprint64Reference(s: string): bigint {
  return h64(s);
}

/** True when the native (no-BigInt) hashing path is in use. */
export const NATIVE_FINGERPRINT = native !== null;

/** Host key of a canonical URL into out[offset], out[offset + 1]. */
export function hostKeyInto(canonicalUrl: string, out: Uint32Array, offset: number): void {
  fingerprintInto(hostOf(canonicalUrl), out, offset);
}

/** PLD key (ICANN-only PSL, host when it has no registrable domain) of a canonical URL. */
export function pldKeyInto(canonicalUrl: string, out: Uint32Array, offset: number): void {
  fingerprintInto(pldOrHost(hostOf(canonicalUrl)), out, offset);
}

/** Splits a 64-bit key into [hi, lo] (for tests and cold code). */
export function splitKey(key: bigint): [number, number] {
  return [Number(key >> 32n), Number(key & 0xffffffffn)];
}
