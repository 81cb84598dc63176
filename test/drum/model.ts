/**
 * In-memory model of DRUM's semantics for the tests: a Map from key to value, tuples applied in
 * arrival order. (Different buckets hold different keys, so DRUM's bucket-by-bucket order gives
 * every key the same history as arrival order.)
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
