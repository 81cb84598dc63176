/**
 * A byte buffer that doubles when full, with a DataView over it: the batches the event loop writes
 * for its worker threads (drum-codec.ts BatchWriter for the DRUM threads, archive-pack.ts Pack
 * for the WARC writer's thread). Bound: the largest batch written between two takes.
 */
export class GrowableBytes {
  protected buf: Uint8Array;
  protected dv: DataView;
  /** bytes written */
  length = 0;
  /** entries written (what an entry is, is the subclass's) */
  count = 0;

  constructor(initial = 1 << 16) {
    this.buf = new Uint8Array(initial);
    this.dv = new DataView(this.buf.buffer);
  }

  /** Room for n more bytes (the buffer doubles until they fit; what was written is kept). */
  protected ensure(n: number): void {
    if (this.length + n <= this.buf.byteLength) return;
    let cap = this.buf.byteLength * 2;
    while (cap < this.length + n) cap *= 2;
    const nb = new Uint8Array(cap);
    nb.set(this.buf.subarray(0, this.length));
    this.buf = nb;
    this.dv = new DataView(nb.buffer);
  }
}
