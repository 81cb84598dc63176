/**
 * File operations that cannot be redirected out of the crawler's own directories.
 *
 * Whoever can write into a state or output directory (or hands someone a prepared one) could plant
 * a symbolic link where the crawler expects its own file (`control-token` → any file) or directory
 * (`urlseen/` → any directory), or a hard link to a file elsewhere on the same file system; the
 * crawler's user (often root) would then write, truncate or chmod that file. Three defences:
 *
 * - `checkOwnTree` walks a state or output directory before a crawl or a resume opens anything in
 *   it (lstat, never following): a symbolic link, a hard-linked regular file (link count > 1), a
 *   FIFO, socket or device anywhere inside is refused with CRAWL_STATE_LINK naming the path. The
 *   directory given itself may be a link (the operator's own path); everything below it is the
 *   crawler's. A few thousand entries: milliseconds.
 * - `openOwnFile` opens with O_NOFOLLOW (a link in the last component fails with ELOOP) and checks
 *   the opened file's link count (fstat), so a link planted while the crawl runs is refused too;
 *   `fchmod` goes through that descriptor, never the path.
 * - temp files of atomic replacement are created with O_CREAT|O_EXCL|O_NOFOLLOW after removing a
 *   stale one (unlink removes a link, never its target), and `rename` replaces a link at the
 *   target name rather than writing through it (src/disk/atomic.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CrawlError } from '../errors.js';

export const CRAWL_STATE_LINK = 'CRAWL_STATE_LINK';

function refused(file: string, what: string): CrawlError {
  return new CrawlError(CRAWL_STATE_LINK, `${file} is ${what}, where the crawler keeps a file or directory of its own: refused, nothing was written through it (remove it, or restore the directory from a copy)`);
}

/** Why an lstat result is not something the crawler may write (null when it may). */
function foreign(st: fs.Stats): string | null {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return null;
  if (!st.isFile()) return 'not a regular file (a FIFO, socket or device)';
  if (st.nlink > 1) return `a regular file with ${st.nlink} hard links (it may be a file outside the directory)`;
  return null;
}

/**
 * Refuse a state or output directory holding anything the crawler did not make (see the module
 * comment). A missing directory passes (it is created later); `maxEntries` bounds the walk.
 */
export function checkOwnTree(dir: string, maxEntries = 10_000_000): void {
  let seen = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && d === dir) return;
      throw e;
    }
    for (const name of names) {
      if (++seen > maxEntries) return;
      const p = path.join(d, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed meanwhile
        throw e;
      }
      const why = foreign(st);
      if (why !== null) throw refused(p, why);
      if (st.isDirectory()) stack.push(p);
    }
  }
}

/** A directory entry that must be the crawler's own directory: absent, or a directory (not a link to one). */
export function checkOwnDir(dir: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (st.isSymbolicLink()) throw refused(dir, 'a symbolic link');
  if (!st.isDirectory()) throw refused(dir, 'not a directory');
}

/** mkdir -p for the crawler's own subdirectories: each existing component below `root` must be a real directory. */
export function mkdirOwn(dir: string, root?: string): void {
  if (root !== undefined) {
    const rel = path.relative(root, dir);
    let p = root;
    for (const part of rel.split(path.sep)) {
      if (part === '' || part === '.') continue;
      p = path.join(p, part);
      checkOwnDir(p);
    }
  } else checkOwnDir(dir);
  fs.mkdirSync(dir, { recursive: true });
}

function afterOpen(fd: number, file: string, writes: boolean): number {
  if (!writes) return fd;
  const st = fs.fstatSync(fd);
  const why = st.isFile() ? (st.nlink > 1 ? `a regular file with ${st.nlink} hard links (it may be a file outside the directory)` : null) : 'not a regular file';
  if (why !== null) {
    fs.closeSync(fd);
    throw refused(file, why);
  }
  return fd;
}

const WRITES = fs.constants.O_WRONLY | fs.constants.O_RDWR;

/** Flags as numbers: 'r' | 'r+' | 'w' | 'wx' | 'a' | 'a+' (the forms the crawler uses). */
export function openFlags(flags: string | number): number {
  if (typeof flags === 'number') return flags;
  const C = fs.constants;
  switch (flags) {
    case 'r': return C.O_RDONLY;
    case 'r+': return C.O_RDWR;
    case 'w': return C.O_WRONLY | C.O_CREAT | C.O_TRUNC;
    case 'wx': return C.O_WRONLY | C.O_CREAT | C.O_EXCL;
    case 'w+': return C.O_RDWR | C.O_CREAT | C.O_TRUNC;
    case 'a': return C.O_WRONLY | C.O_CREAT | C.O_APPEND;
    case 'a+': return C.O_RDWR | C.O_CREAT | C.O_APPEND;
    default: throw new TypeError(`openFlags: unsupported flags ${flags}`);
  }
}

/** open(2) of one of the crawler's own files without following a link (see the module comment). */
export function openOwnFileSync(file: string, flags: string | number, mode = 0o644): number {
  const f = openFlags(flags);
  let fd: number;
  try {
    fd = fs.openSync(file, f | fs.constants.O_NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw refused(file, 'a symbolic link');
    throw e;
  }
  return afterOpen(fd, file, (f & WRITES) !== 0);
}

/** Async form of openOwnFileSync: a FileHandle. */
export async function openOwnFile(file: string, flags: string | number, mode = 0o644): Promise<fs.promises.FileHandle> {
  const f = openFlags(flags);
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, f | fs.constants.O_NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw refused(file, 'a symbolic link');
    throw e;
  }
  if ((f & WRITES) !== 0) {
    const st = await fh.stat();
    if (!st.isFile() || st.nlink > 1) {
      await fh.close();
      throw refused(file, st.isFile() ? `a regular file with ${st.nlink} hard links (it may be a file outside the directory)` : 'not a regular file');
    }
  }
  return fh;
}

/**
 * A new file at `file` for writing, never through a link: a stale one (a leftover temp file, or
 * a link planted at its name) is removed first — unlink removes a link, not its target — and the
 * file is created exclusively (O_CREAT|O_EXCL, which never follows a link).
 */
export function createOwnFileSync(file: string, mode = 0o644): number {
  try {
    fs.unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return openOwnFileSync(file, 'wx', mode);
}
