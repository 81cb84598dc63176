/**
 * In-memory model of DRUM's semantics for the tests: a Map from key to value, tuples applied in
 * arrival order. (Different buckets hold different keys, so DRUM's bucket-by-bucket order gives
 * every key the same history as arrival order.) Also the merge functions the DRUM tests share.
 */
import type { DrumOp } from '../../src/drum/index.js';

export interface ModelTuple {
  op: DrumOp;
  hi: number;
  lo: number;
  value: Uint8Array | null;
}

export interface ModelResult {
  unique: boolean;
  value: Uint8Array | null;
}

export class DrumModel {
  readonly map = new Map<string, Uint8Array>();
  constructor(
    private readonly valueBytes: number | 'variable',
    private readonly merge: (a: Uint8Array, b: Uint8Array) => Uint8Array,
  ) {}

  apply(t: ModelTuple): ModelResult {
    const key = `${t.hi}:${t.lo}`;
    const cur = this.map.get(key);
    const exists = cur !== undefined;
    const res: ModelResult = { unique: !exists, value: exists ? cur : null };
    if (t.op !== 'check') {
      if (t.value !== null) this.map.set(key, exists ? this.merge(cur, t.value) : t.value.slice());
      else if (!exists) this.map.set(key, this.valueBytes === 'variable' ? new Uint8Array(0) : new Uint8Array(this.valueBytes));
    }
    return res;
  }
}

/** The add-merge of 4-byte big-endian counts (fixed-size values). */
export const addU32 = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, (new DataView(a.buffer, a.byteOffset).getUint32(0) + new DataView(b.buffer, b.byteOffset).getUint32(0)) >>> 0);
  return out;
};

/** A merge of variable values: the two concatenated, cut to their last 12 bytes. */
export const concatTail = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const c = new Uint8Array(a.length + b.length);
  c.set(a);
  c.set(b, a.length);
  return c.slice(Math.max(0, c.length - 12));
};
