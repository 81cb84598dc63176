/**
 * The WARC scanner's read window: the file is read in large sequential pieces and records are
 * parsed from views of the window, so a scan of a multi-gigabyte WARC costs one fixed buffer.
 */
import type { FileHandle } from 'node:fs/promises';

/** Bytes read from the file at a time (the read window). */
export const WINDOW = 1 << 20;

/** A sliding read window over the file: views stay valid until the next view() call. */
export class Window {
  private readonly buf = Buffer.allocUnsafe(WINDOW);
  private start = 0;
  private len = 0;
  constructor(readonly fh: FileHandle, readonly size: number) {}

  /** The bytes from `off` to the end of the window; at least min(need, size - off) of them. */
  async view(off: number, need: number): Promise<Buffer> {
    return this.peek(off, need) ?? (await this.fill(off), this.buf.subarray(0, this.len));
  }

  /** view() when the window already holds the bytes (no await: most units are small), else null. */
  peek(off: number, need: number): Buffer | null {
    const want = Math.min(need, WINDOW, this.size - off);
    return off < this.start || off + want > this.start + this.len ? null : this.buf.subarray(off - this.start, this.len);
  }

  private async fill(off: number): Promise<void> {
    const n = Math.max(0, Math.min(WINDOW, this.size - off));
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.fh.read(this.buf, got, n - got, off + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    this.start = off;
    this.len = got;
  }
}
