/**
 * Bench-only Mercator-B batch disk check, as the IRLbot thesis describes and models it (§IV.1,
 * Theorem 1 and its proof): RAM holds only (hash, pointer) pairs, H + P = 8 + 4 bytes each, in one of
 * two half-buffers of m = R / 2(H + P) entries (the other half would take new URLs while one is
 * checked); the URL text goes to disk as it arrives. When the half-buffer is full it is sorted and
 * merged in one sequential pass with the sorted URLseen file of 8-byte hashes, which is rewritten
 * with the new unique hashes; the text file is then read back and the text of unique URLs appended
 * to the queue. Per batch: write + read m·b of text, read + write URLseen, append m·p·H hashes, and
 * p·b per unique URL to the queue — exactly the terms of eq. (3).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { IoTally, SeqReader, SeqWriter, varint } from './io.js';

export const MERC_H = 8;
export const MERC_P = 4;

export class MercatorB {
  readonly io = new IoTally();
  readonly m: number;
  private readonly hi: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly order: Uint32Array;
  private readonly uniq: Uint8Array;
  private count = 0;
  private text: SeqWriter;
  private readonly queue: SeqWriter;
  private seenFile: string;
  private gen = 0;
  private readonly scratch: number[] = [];
  private readonly enc = new TextEncoder();
  uniques = 0;
  batches = 0;
  seenKeys = 0;

  constructor(private readonly dir: string, R: number) {
    fs.mkdirSync(dir, { recursive: true });
    // Half of R for the buffer being filled (the proof of Theorem 1: m = R / 2(H+P)).
    this.m = Math.max(1, Math.floor(R / (2 * (MERC_H + MERC_P))));
    this.hi = new Uint32Array(this.m);
    this.lo = new Uint32Array(this.m);
    this.order = new Uint32Array(this.m);
    this.uniq = new Uint8Array(this.m);
    this.text = new SeqWriter(path.join(dir, 'text.tmp'), this.io);
    this.queue = new SeqWriter(path.join(dir, 'queue'), this.io);
    this.seenFile = path.join(dir, 'urlseen-0');
    fs.writeFileSync(this.seenFile, '');
  }

  add(hi: number, lo: number, url: string): void {
    // The pointer is the record's position in the text file; records are in arrival order, so
    // arrival index j and pointer identify the same record (the read-back below is sequential).
    this.scratch.length = 0;
    varint(url.length, this.scratch);
    this.text.write(Uint8Array.from(this.scratch));
    this.text.write(this.enc.encode(url));
    this.hi[this.count] = hi;
    this.lo[this.count] = lo;
    this.count++;
    if (this.count === this.m) this.batch();
  }

  finish(): void {
    if (this.count > 0) this.batch();
    this.text.close();
    this.queue.close();
  }

  private batch(): void {
    const n = this.count;
    const { hi, lo, order, uniq } = this;
    for (let j = 0; j < n; j++) order[j] = j;
    // Sort by key, ties by arrival (the first occurrence in the batch is the unique one).
    const ord = order.subarray(0, n).sort((a, b) => hi[a]! - hi[b]! || lo[a]! - lo[b]! || a - b);
    uniq.fill(0, 0, n);
    // One sequential merge pass: old URLseen (sorted 8-byte hashes, big-endian) + sorted buffer.
    const next = path.join(this.dir, `urlseen-${++this.gen}`);
    const rd = new SeqReader(this.seenFile, this.io);
    const wr = new SeqWriter(next, this.io);
    const rec = Buffer.allocUnsafe(8);
    let have = false, ohi = 0, olo = 0;
    const pull = (): void => {
      if (rd.fill(8) < 8) {
        have = false;
        return;
      }
      const b = rd.bytes, p = rd.pos;
      ohi = b.readUInt32BE(p);
      olo = b.readUInt32BE(p + 4);
      rd.advance(8);
      have = true;
    };
    const put = (h: number, l: number): void => {
      rec.writeUInt32BE(h, 0);
      rec.writeUInt32BE(l, 4);
      wr.write(rec);
    };
    pull();
    let keys = 0;
    for (let t = 0; t < n; t++) {
      const j = ord[t]!;
      const h = hi[j]!, l = lo[j]!;
      if (t > 0 && hi[ord[t - 1]!] === h && lo[ord[t - 1]!] === l) continue; // repeat within the batch
      while (have && (ohi < h || (ohi === h && olo < l))) {
        put(ohi, olo);
        keys++;
        pull();
      }
      if (have && ohi === h && olo === l) continue; // duplicate of URLseen (copied on the next pull)
      uniq[j] = 1;
      put(h, l);
      keys++;
    }
    while (have) {
      put(ohi, olo);
      keys++;
      pull();
    }
    rd.close();
    wr.close();
    fs.rmSync(this.seenFile);
    this.seenFile = next;
    this.seenKeys = keys;
    // Recover the text of unique URLs through the pointers: one sequential read of the text file.
    this.text.close();
    const tr = new SeqReader(this.text.file, this.io);
    for (let j = 0; j < n; j++) {
      tr.fill(3);
      const b = tr.bytes;
      let p = tr.pos, len = 0, shift = 0;
      for (;;) {
        const c = b[p++]!;
        len |= (c & 0x7f) << shift;
        if (c < 0x80) break;
        shift += 7;
      }
      tr.advance(p - tr.pos);
      tr.fill(len);
      if (uniq[j] === 1) {
        this.queue.write(tr.bytes.subarray(tr.pos, tr.pos + len));
        this.uniques++;
      }
      tr.advance(len);
    }
    tr.close();
    this.text = new SeqWriter(this.text.file, this.io); // truncate: the next batch starts empty
    this.count = 0;
    this.batches++;
  }
}
