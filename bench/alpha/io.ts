/**
 * Byte-counting sequential file I/O for the bench-only batch-check implementations (Mercator-B,
 * Polybot). Every byte goes through a real file descriptor; the counters are what alpha divides.
 */
import * as fs from 'node:fs';

export class IoTally {
  read = 0;
  written = 0;
  get total(): number {
    return this.read + this.written;
  }
}

/** Append-only writer with a RAM buffer of `bufBytes` (the thesis' sequential blocks). */
export class SeqWriter {
  private readonly fd: number;
  private readonly buf: Buffer;
  private len = 0;
  position = 0;

  constructor(readonly file: string, private readonly tally: IoTally, bufBytes = 1 << 20, append = false) {
    this.fd = fs.openSync(file, append ? 'a' : 'w');
    this.buf = Buffer.allocUnsafe(bufBytes);
    if (append) this.position = fs.fstatSync(this.fd).size;
  }

  write(b: Uint8Array): void {
    if (this.len + b.length > this.buf.length) this.flush();
    if (b.length > this.buf.length) {
      fs.writeSync(this.fd, b);
      this.tally.written += b.length;
    } else {
      this.buf.set(b, this.len);
      this.len += b.length;
    }
    this.position += b.length;
  }

  flush(): void {
    if (this.len === 0) return;
    fs.writeSync(this.fd, this.buf, 0, this.len);
    this.tally.written += this.len;
    this.len = 0;
  }

  close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }
}

/** Sequential reader in chunks of `chunk` bytes (the thesis' Δ-sized reads). */
export class SeqReader {
  private readonly fd: number;
  private buf: Buffer;
  private start = 0;
  private end = 0;
  private eof = false;

  constructor(readonly file: string, private readonly tally: IoTally, private readonly chunk = 1 << 20) {
    this.fd = fs.openSync(file, 'r');
    this.buf = Buffer.allocUnsafe(chunk);
  }

  /** Ensures ≥ n bytes are buffered (unless EOF); returns the number available. */
  fill(n: number): number {
    if (this.end - this.start >= n || this.eof) return this.end - this.start;
    if (this.start > 0) {
      this.buf.copy(this.buf, 0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    if (n > this.buf.length) {
      const nb = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
      this.buf.copy(nb, 0, 0, this.end);
      this.buf = nb;
    }
    while (this.end < n && !this.eof) {
      const got = fs.readSync(this.fd, this.buf, this.end, Math.min(this.chunk, this.buf.length - this.end), null);
      if (got === 0) this.eof = true;
      this.tally.read += got;
      this.end += got;
    }
    return this.end - this.start;
  }

  get bytes(): Buffer {
    return this.buf;
  }
  get pos(): number {
    return this.start;
  }
  advance(n: number): void {
    this.start += n;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

export function varint(n: number, out: number[]): void {
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
}
