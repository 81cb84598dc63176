/**
 * The CDXJ index beside one WARC file (cdxj.ts has the line format).
 *
 * While its WARC file is being written, the index lines go, in write order, to
 * `<warc name without .warc[.gz|.zst]>.cdxj.open` (appended, buffered, flushed and fsynced with
 * the WARC: WarcWriter.sync). When the WARC file is finished (rotation, close), the lines are
 * sorted into `<name>.cdxj.tmp`, fsynced, renamed to `<name>.cdxj`, and the `.open` file removed:
 * a `.cdxj` file is therefore always complete and sorted, and a crash leaves at most an `.open`
 * file, which the resume's recovery turns into a `.cdxj` (cdxj-recover.ts).
 *
 * Bounded memory: the sort is an external merge sort — runs of at most `runBytes` of lines (default
 * 4 MiB) are sorted in RAM and written to `<name>.cdxj.runN`, then merged through a heap (one line
 * per run held). The run is the archive thread's largest transient: a run of R bytes of lines
 * holds about 1.5 R of its V8 heap (a string and an array slot per ~250-byte line), so 32 MiB runs
 * grew that heap from 17 to 65 MiB at each rotation and took the process over `--ram 512M`
 * (bench:soak at 10^7 hosts); 4 MiB runs keep it within the thread's part of the fixed RAM
 * (src/budget/ram-budget.ts). A 1 GiB WARC of bench:soak's 21.5 KB pages has 252,150 lines (63.5 MB): 16 runs.
 */
import { open, rename, rm, readFile, type FileHandle } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';

/** `<dir>/<base>.warc.gz` → `<dir>/<base>.cdxj` (the finished index of that WARC file). */
export function cdxjPathFor(warcFile: string): string {
  return warcFile.replace(/\.warc(\.gz|\.zst)?$/, '') + '.cdxj';
}

/** Where the lines of a WARC file still being written go (unsorted). */
export function cdxjOpenPathFor(warcFile: string): string {
  return cdxjPathFor(warcFile) + '.open';
}

const DEFAULT_RUN_BYTES = 4 * 1024 * 1024;
/** Buffered lines are written out once they reach this many bytes (as well as at every sync). */
const FLUSH_BYTES = 256 * 1024;

export class CdxjSidecar {
  private buf: string[] = [];
  private bufBytes = 0;
  private chain: Promise<void> = Promise.resolve();

  private constructor(readonly warcFile: string, private fh: FileHandle | null) {}

  /** Start the index of a new WARC file (its `.open` file must not exist: the WARC file is new too). */
  static async create(warcFile: string): Promise<CdxjSidecar> {
    return new CdxjSidecar(warcFile, await open(cdxjOpenPathFor(warcFile), 'wx'));
  }

  add(line: string): void {
    this.buf.push(line);
    this.bufBytes += line.length + 1;
    // a failed write keeps the chain rejected: the next sync() reports it
    if (this.bufBytes >= FLUSH_BYTES) this.flush().catch(() => undefined);
  }

  /** Write the buffered lines (in order: every flush waits for the one before). */
  flush(): Promise<void> {
    if (this.bufBytes > 0 && this.fh !== null) {
      const text = this.buf.join('\n') + '\n';
      this.buf = [];
      this.bufBytes = 0;
      const fh = this.fh;
      this.chain = this.chain.then(() => writeAll(fh, Buffer.from(text, 'utf8')));
    }
    return this.chain;
  }

  /** Flush and fsync the `.open` file (with the WARC's sync: the checkpoint's lines are durable). */
  async sync(): Promise<void> {
    await this.flush();
    await this.fh?.sync();
  }

  /** The WARC file is complete: sort the lines into `<name>.cdxj` (see the top comment). */
  async finish(opts: { runBytes?: number } = {}): Promise<string> {
    await this.sync();
    await this.fh?.close();
    this.fh = null;
    const dst = cdxjPathFor(this.warcFile);
    await sortLinesFile(cdxjOpenPathFor(this.warcFile), dst, opts.runBytes ?? DEFAULT_RUN_BYTES);
    await rm(cdxjOpenPathFor(this.warcFile), { force: true });
    return dst;
  }

  /** Close without finishing (the `.open` file stays for recovery). */
  async abandon(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.fh?.close();
    this.fh = null;
  }
}

async function writeAll(fh: FileHandle, b: Buffer): Promise<void> {
  let at = 0;
  while (at < b.length) {
    const { bytesWritten } = await fh.write(b, at, b.length - at);
    at += bytesWritten;
  }
}

/**
 * Sort the lines of `src` (byte order: CDXJ lines are ASCII — canonical URLs are percent-encoded —
 * so JavaScript's UTF-16 order is the byte order pywb and `LC_ALL=C sort` use) into `dst`, via
 * `dst.tmp`, fsync and rename. Empty lines are dropped. Memory: about `runBytes` of lines.
 */
export async function sortLinesFile(src: string, dst: string, runBytes = DEFAULT_RUN_BYTES): Promise<void> {
  const tmp = dst + '.tmp';
  const runs: string[] = [];
  let lines: string[] = [];
  let bytes = 0;
  const spill = async (): Promise<void> => {
    lines.sort(byteOrder);
    const run = `${dst}.run${runs.length}`;
    await writeFileSynced(run, lines);
    runs.push(run);
    lines = [];
    bytes = 0;
  };
  try {
    for await (const l of readLines(src)) {
      if (l === '') continue;
      lines.push(l);
      bytes += l.length + 1;
      if (bytes >= runBytes) await spill();
    }
    if (runs.length === 0) {
      lines.sort(byteOrder);
      await writeFileSynced(tmp, lines);
    } else {
      if (lines.length > 0) await spill();
      await mergeRuns(runs, tmp);
    }
    await rename(tmp, dst);
    await syncDir(path.dirname(dst));
  } finally {
    for (const r of runs) await rm(r, { force: true });
    await rm(tmp, { force: true });
  }
}

const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

async function* readLines(file: string): AsyncGenerator<string> {
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  try {
    for await (const l of rl) yield l;
  } finally {
    rl.close();
  }
}

async function writeFileSynced(file: string, lines: readonly string[]): Promise<void> {
  const fh = await open(file, 'w');
  try {
    // in slices: one string of a whole run would double its memory
    for (let i = 0; i < lines.length; i += 4096) {
      const part = lines.slice(i, i + 4096);
      await writeAll(fh, Buffer.from(part.join('\n') + '\n', 'utf8'));
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** k-way merge of sorted run files into `out`: one pending line per run, the runs in a binary heap by it. */
async function mergeRuns(runs: readonly string[], out: string): Promise<void> {
  const its = runs.map((r) => readLines(r)[Symbol.asyncIterator]());
  const heads: string[] = [];
  const heap: number[] = [];
  for (let i = 0; i < its.length; i++) {
    const n = await its[i]!.next();
    heads.push(n.done === true ? '' : n.value);
    if (n.done !== true) heap.push(i);
  }
  const before = (a: number, b: number): boolean => heads[a]! < heads[b]!;
  const siftDown = (at: number): void => {
    for (;;) {
      const l = 2 * at + 1;
      if (l >= heap.length) return;
      const c = l + 1 < heap.length && before(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!before(heap[c]!, heap[at]!)) return;
      [heap[c], heap[at]] = [heap[at]!, heap[c]!];
      at = c;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
  const fh = await open(out, 'w');
  try {
    let pending: string[] = [];
    let pendingBytes = 0;
    while (heap.length > 0) {
      const best = heap[0]!;
      pending.push(heads[best]!);
      pendingBytes += heads[best]!.length + 1;
      const n = await its[best]!.next();
      if (n.done === true) {
        heap[0] = heap[heap.length - 1]!;
        heap.pop();
      } else heads[best] = n.value;
      siftDown(0);
      if (pendingBytes >= FLUSH_BYTES) {
        await writeAll(fh, Buffer.from(pending.join('\n') + '\n', 'utf8'));
        pending = [];
        pendingBytes = 0;
      }
    }
    if (pending.length > 0) await writeAll(fh, Buffer.from(pending.join('\n') + '\n', 'utf8'));
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsync a directory (the rename of a finished index survives a power cut). */
async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | null = null;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // not every platform lets a directory be opened for fsync; the rename itself is atomic
  } finally {
    await fh?.close();
  }
}

/** Lines of a CDXJ file (tests, lookups): the whole file; an index is ~0.1 % of its WARC's size. */
export async function readCdxj(file: string): Promise<{ key: string; timestamp: string; json: Record<string, string> }[]> {
  const text = await readFile(file, 'utf8');
  return text.split('\n').filter((l) => l !== '').map(parseCdxjLine);
}

export function parseCdxjLine(l: string): { key: string; timestamp: string; json: Record<string, string> } {
  const a = l.indexOf(' ');
  const b = l.indexOf(' ', a + 1);
  return { key: l.slice(0, a), timestamp: l.slice(a + 1, b), json: JSON.parse(l.slice(b + 1)) as Record<string, string> };
}
