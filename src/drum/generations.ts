/**
 * Bucket-file generations and file recycling (thesis IV.3: the bucket files and the disk cache Z
 * of Fig. 1, rewritten by every merge).
 *
 * Concept: a merge of bucket i redirects new tuples to a new generation of bucket files and writes
 * a new Z_i; after the commit the merged generation and the old Z_i are retired. Invariant:
 * generations are DRUM-wide increasing (next), so a recycled file's stale blocks always carry an
 * older tag than the live ones (TAG_WINDOW). Cost: at most one spare bucket pair and one spare Z
 * on disk (≈ r·(H+b)/H + |Z|/k bytes), two fields in RAM; overwriting a spare instead of writing
 * new files saves the page-cache allocation of every new page.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { BlockWriter, fsyncDir, type Compression, type IoCounters } from '../disk/index.js';
import { pad, type BucketGen } from './format.js';

/**
 * Recycled files. Writing into new page-cache pages costs ~1–2.7 s of system CPU per GB on this
 * VM (Firecracker, ext4) and overwriting cached pages of an existing file 0.15–0.2 s
 * (bench/drum/pagecache.ts; docs/drum.md "File recycling"): a round at
 * U = 10^9 writes 9.4 GB of bucket files and 5 GB of Z. So a merged bucket's kv/aux pair and the
 * superseded Z are kept as ONE spare each (not deleted), and the next new generation / Z′ is
 * written over the spare. RAM: two small fields (bSpare, zSpare), nothing that grows.
 */
export const SPARE_KV = 'bspare.kv';
export const SPARE_AUX = 'bspare.aux';
export const SPARE_Z = 'zspare.z';
/**
 * Block tags are the low 16 bits of the generation; generations are DRUM-wide increasing, so a
 * recycled file's stale blocks have older generations. A spare whose stale blocks may be
 * TAG_WINDOW or more generations older than the new one is emptied first, so no stale tag can
 * equal the live one modulo 2^16.
 */
export const TAG_WINDOW = 32768;
/** fdatasyncs of one sync() in flight at once (libuv's pool has 4 threads by default). */
const SYNC_LANES = 3;
const fdatasync = promisify(fs.fdatasync);

export class Generations {
  /** Next bucket-file generation (DRUM-wide, increasing: block tags rely on it, see TAG_WINDOW). */
  next = 1;
  /** The spare bucket-file pair (SPARE_KV/SPARE_AUX) and its stale generations' lower bound. */
  private bSpare: { oldest: number } | null = null;
  /** SPARE_Z exists (a superseded Z with one link). */
  private zSpare = false;
  /**
   * Generations with blocks written since the last sync() (Drum.persist), and whether a file was
   * created or renamed since then. RAM: at most the pending generations (≈ k, two per bucket
   * while it merges).
   */
  private readonly unsynced = new Set<BucketGen>();
  private dirUnsynced = false;
  /** sync() calls under way, and the descriptors of generations retired meanwhile (closed after). */
  private syncing = 0;
  private readonly closeAfterSync: number[] = [];

  constructor(
    readonly dir: string,
    private readonly io: IoCounters,
    private readonly compression: Compression,
  ) {}

  /**
   * At open: the spares a previous run left behind. A spare bucket pair: its stale generations
   * are unknown, so it cannot be recycled safely (TAG_WINDOW) — delete it. A spare Z needs no such
   * bound (Z is read only up to the manifest's zBytes and cut to it before the commit): keep it.
   */
  adoptSpares(): void {
    fs.rmSync(path.join(this.dir, SPARE_KV), { force: true });
    fs.rmSync(path.join(this.dir, SPARE_AUX), { force: true });
    this.zSpare = fs.existsSync(path.join(this.dir, SPARE_Z));
  }

  zFile(i: number, g: number): string {
    return path.join(this.dir, `z${pad(i)}-${g}.z`);
  }

  bFile(i: number, g: number, ext: 'kv' | 'aux'): string {
    return path.join(this.dir, `b${pad(i)}-${g}.${ext}`);
  }

  /**
   * Files of a new generation g (> every generation written before, see genNext) of bucket i: the
   * spare pair renamed and overwritten from offset 0 when there is one, else new files. Blocks are
   * tagged g, so recovery stops at the first stale block of an older generation after the live
   * ones (recoverGen); during operation nothing is read past the writer's offset.
   */
  newGen(i: number, g: number): BucketGen {
    this.dirUnsynced = true;
    const kvf = this.bFile(i, g, 'kv');
    const auxf = this.bFile(i, g, 'aux');
    let oldest = g;
    let kvFd = -1;
    let auxFd = -1;
    const sp = this.bSpare;
    if (sp !== null) {
      this.bSpare = null;
      try {
        fs.renameSync(path.join(this.dir, SPARE_KV), kvf);
        fs.renameSync(path.join(this.dir, SPARE_AUX), auxf);
        kvFd = fs.openSync(kvf, 'r+');
        auxFd = fs.openSync(auxf, 'r+');
        if (g - sp.oldest >= TAG_WINDOW) {
          // Stale blocks could be 2^16 generations old and carry g's tag: start empty.
          fs.ftruncateSync(kvFd, 0);
          fs.ftruncateSync(auxFd, 0);
        } else oldest = sp.oldest;
      } catch {
        // (A spare that vanished: fall back to new files.)
        if (kvFd >= 0) fs.closeSync(kvFd);
        if (auxFd >= 0) fs.closeSync(auxFd);
        kvFd = auxFd = -1;
      }
    }
    if (kvFd < 0) {
      kvFd = fs.openSync(kvf, 'w+');
      auxFd = fs.openSync(auxf, 'w+');
      oldest = g;
    }
    return {
      gen: g,
      kvFd,
      auxFd,
      kv: new BlockWriter(kvFd, 0, this.io, 'bucket-kv', this.compression, g),
      aux: new BlockWriter(auxFd, 0, this.io, 'bucket-aux', this.compression, g),
      tuples: 0,
      oldest,
      recyclable: true,
    };
  }

  /**
   * A superseded Z file: becomes the spare Z (overwritten by the next Z′ written, see openZOut)
   * unless one exists or the file has other links — the benchmark's --z-cache hard-links pristine
   * Z files, which must never be overwritten — then it is deleted.
   */
  retireZ(file: string): void {
    if (!this.zSpare) {
      try {
        if (fs.statSync(file).nlink === 1) {
          fs.renameSync(file, path.join(this.dir, SPARE_Z));
          this.zSpare = true;
          return;
        }
      } catch {
        return; // already gone
      }
    }
    fs.rmSync(file, { force: true });
  }

  /** Opens Z′ for writing: the spare Z renamed (overwritten from offset 0; cut after finish), or a new file. */
  openZOut(file: string): number {
    if (this.zSpare) {
      this.zSpare = false;
      try {
        fs.renameSync(path.join(this.dir, SPARE_Z), file);
        const fd = fs.openSync(file, 'r+');
        // Checked again here: a link made after the file became the spare must not be overwritten.
        if (fs.fstatSync(fd).nlink === 1) return fd;
        fs.closeSync(fd);
        fs.rmSync(file, { force: true });
      } catch {
        /* no spare after all: a new file */
      }
    }
    return fs.openSync(file, 'w');
  }

  /** A merged generation's files: the spare pair if it may be recycled and there is none, else deleted. */
  retireGen(i: number, g: BucketGen): void {
    this.unsynced.delete(g); // (its tuples are in the committed Z)
    if (this.syncing > 0) this.closeAfterSync.push(g.kvFd, g.auxFd);
    else {
      fs.closeSync(g.kvFd);
      fs.closeSync(g.auxFd);
    }
    const kvf = this.bFile(i, g.gen, 'kv');
    const auxf = this.bFile(i, g.gen, 'aux');
    if (this.bSpare === null && g.recyclable) {
      try {
        fs.renameSync(kvf, path.join(this.dir, SPARE_KV));
        fs.renameSync(auxf, path.join(this.dir, SPARE_AUX));
        this.bSpare = { oldest: g.oldest };
        return;
      } catch {
        fs.rmSync(path.join(this.dir, SPARE_KV), { force: true });
      }
    }
    fs.rmSync(kvf, { force: true });
    fs.rmSync(auxf, { force: true });
  }

  /** A block pair was written to generation g (Drum.flushBuffers): sync() must fsync its files. */
  written(g: BucketGen): void {
    this.unsynced.add(g);
  }

  /**
   * fdatasyncs every bucket file written since the last call, then the directory when a
   * generation's file was created or renamed meanwhile: after it, every block written before the
   * call survives a power loss as well as a process crash (Drum.persist). The fdatasyncs run in
   * libuv's pool, SYNC_LANES at a time (one lane of its four is left to the process's other file
   * I/O); the file system commits them together: 256 small files in 32–95 ms of wall time and
   * ~35 ms of CPU against 300–900 ms one after another on this VM. A generation retired meanwhile
   * keeps its descriptors open until the sync ends (retireGen), so no descriptor is reused under it.
   */
  async sync(): Promise<void> {
    const fds: number[] = [];
    for (const g of this.unsynced) fds.push(g.kvFd, g.auxFd);
    this.unsynced.clear();
    const dir = this.dirUnsynced;
    this.dirUnsynced = false;
    this.syncing++;
    try {
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < fds.length) await fdatasync(fds[next++]!);
      };
      await Promise.all(Array.from({ length: Math.min(SYNC_LANES, fds.length) }, lane));
      if (dir) fsyncDir(this.dir);
    } finally {
      if (--this.syncing === 0) {
        for (const fd of this.closeAfterSync) fs.closeSync(fd);
        this.closeAfterSync.length = 0;
      }
    }
  }

  /** The files were closed without a sync (Drum.close): nothing is left to sync. */
  forget(): void {
    this.unsynced.clear();
  }
}
