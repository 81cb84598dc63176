/**
 * Bench-only Polybot batch disk check, as the IRLbot thesis describes and models it (§IV.1,
 * Theorem 1): RAM holds the URL strings themselves in a sorted tree, b + 4P bytes per URL (string +
 * tree pointers), in a half-buffer of R/2 bytes. When it is full, the tree is merged in order with
 * URLseen, a sorted file of compressed URL strings, which is rewritten with the new URLs; new URLs
 * are appended to the queue. Per batch: read + write URLseen (2f), grown by m·p·bq — eq. (4).
 *
 * Compression of URLseen: front coding of the sorted strings (shared-prefix length, suffix) in
 * blocks of 64 KB, each deflated (zlib level 1) — a real compressor, so bq is measured, not assumed
 * (the thesis' "very optimistic" bq = 5 bytes). The tree is a JS Set sorted at merge time: the order
 * and the I/O are those of an in-order walk of a balanced tree; its CPU cost is not what this bench
 * measures.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { IoTally, SeqReader, SeqWriter } from './io.js';

export const POLY_P = 4;
const BLOCK = 64 * 1024;

class BlockOut {
  private raw = Buffer.allocUnsafe(BLOCK + 4096);
  private len = 0;
  private count = 0;
  private prev = '';
  compressedBytes = 0;
  strings = 0;
  constructor(private readonly w: SeqWriter) {}
  add(s: string): void {
    let k = 0;
    const max = Math.min(s.length, this.prev.length, 255);
    while (k < max && s.charCodeAt(k) === this.prev.charCodeAt(k)) k++;
    const suf = s.length - k;
    if (this.len + 3 + suf > this.raw.length) this.flush();
    this.raw[this.len++] = k;
    this.raw.writeUInt16LE(suf, this.len);
    this.len += 2;
    this.len += this.raw.write(s.slice(k), this.len, 'latin1');
    this.prev = s;
    this.count++;
    this.strings++;
    if (this.len >= BLOCK) this.flush();
  }
  flush(): void {
    if (this.count === 0) return;
    const z = zlib.deflateRawSync(this.raw.subarray(0, this.len), { level: 1 });
    const head = Buffer.allocUnsafe(8);
    head.writeUInt32LE(z.length, 0);
    head.writeUInt32LE(this.count, 4);
    this.w.write(head);
    this.w.write(z);
    this.compressedBytes += z.length + 8;
    this.len = 0;
    this.count = 0;
    this.prev = ''; // each block decodes on its own
  }
}

/** Streams the sorted strings of a URLseen file, block by block. */
class BlockIn {
  private strs: string[] = [];
  private i = 0;
  constructor(private readonly r: SeqReader) {}
  next(): string | null {
    if (this.i < this.strs.length) return this.strs[this.i++]!;
    if (this.r.fill(8) < 8) return null;
    const zlen = this.r.bytes.readUInt32LE(this.r.pos);
    const count = this.r.bytes.readUInt32LE(this.r.pos + 4);
    this.r.advance(8);
    this.r.fill(zlen);
    const raw = zlib.inflateRawSync(this.r.bytes.subarray(this.r.pos, this.r.pos + zlen));
    this.r.advance(zlen);
    const out: string[] = new Array(count);
    let p = 0, prev = '';
    for (let c = 0; c < count; c++) {
      const k = raw[p]!;
      const suf = raw.readUInt16LE(p + 1);
      p += 3;
      prev = prev.slice(0, k) + raw.toString('latin1', p, p + suf);
      p += suf;
      out[c] = prev;
    }
    this.strs = out;
    this.i = 0;
    return this.next();
  }
}

export class Polybot {
  readonly io = new IoTally();
  private tree = new Set<string>();
  private ram = 0;
  private readonly half: number;
  private readonly queue: SeqWriter;
  private seenFile: string;
  private gen = 0;
  uniques = 0;
  batches = 0;
  seenStrings = 0;
  seenBytes = 0;

  constructor(private readonly dir: string, R: number) {
    fs.mkdirSync(dir, { recursive: true });
    this.half = R / 2;
    this.queue = new SeqWriter(path.join(dir, 'queue'), this.io);
    this.seenFile = path.join(dir, 'urlseen-0');
    fs.writeFileSync(this.seenFile, '');
  }

  add(_hi: number, _lo: number, url: string): void {
    if (this.tree.has(url)) return;
    this.tree.add(url);
    this.ram += url.length + 4 * POLY_P; // b + 4P per tree node (the proof of Theorem 1)
    if (this.ram >= this.half) this.batch();
  }

  finish(): void {
    if (this.tree.size > 0) this.batch();
    this.queue.close();
  }

  /** Mean compressed bytes per URL in URLseen (the measured bq). */
  get bq(): number {
    return this.seenStrings === 0 ? 0 : this.seenBytes / this.seenStrings;
  }

  private batch(): void {
    const sorted = [...this.tree].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const next = path.join(this.dir, `urlseen-${++this.gen}`);
    const rd = new SeqReader(this.seenFile, this.io);
    const wr = new SeqWriter(next, this.io);
    const inp = new BlockIn(rd);
    const out = new BlockOut(wr);
    let old = inp.next();
    for (const s of sorted) {
      while (old !== null && old < s) {
        out.add(old);
        old = inp.next();
      }
      if (old === s) continue; // seen before: copied with the old entries
      out.add(s);
      this.queue.write(Buffer.from(s, 'latin1'));
      this.uniques++;
    }
    while (old !== null) {
      out.add(old);
      old = inp.next();
    }
    out.flush();
    rd.close();
    wr.close();
    fs.rmSync(this.seenFile);
    this.seenFile = next;
    this.seenStrings = out.strings;
    this.seenBytes = out.compressedBytes;
    this.tree = new Set();
    this.ram = 0;
    this.batches++;
  }
}
