/**
 * Checks the command line runs on its inputs before anything is created: the state and output
 * directories (usable, writable, with free space) and the status port (the seeds and config files
 * are checked where they are read, src/config/config.ts). Only when every check has passed does
 * `createDirs` make the directories, one component at a time.
 *
 * Why not `mkdir -p` (Node's `mkdir(..., { recursive: true })`): on a path under /proc it never
 * returns (it retries ENOENT forever), and a failure halfway leaves the components it made behind.
 * A missing component is created here with a plain `mkdir`, which fails at once, and the
 * components made by a run that then fails are removed again.
 */
import { constants as FS } from 'node:fs';
import { access, mkdir, rmdir, stat, statfs } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { CrawlError } from '../errors.js';

/** A directory cannot be used: not a directory, not writable, or on a pseudo file system. */
export const CRAWL_DIR_UNUSABLE = 'CRAWL_DIR_UNUSABLE';
/** The file system of a directory has less free space than MIN_FREE_BYTES. */
export const CRAWL_DIR_FULL = 'CRAWL_DIR_FULL';

/**
 * Free space a state or output directory needs at start. The first checkpoint alone writes the
 * DRUM manifests, the frontier's queue heads and a WARC file header; a crawl that cannot write
 * those fails in its first seconds, so it is refused before it starts.
 */
export const MIN_FREE_BYTES = 16 * 2 ** 20;

/**
 * statfs magic numbers of kernel pseudo file systems (linux/magic.h): directories cannot be made
 * there even where the mount is writable (/proc, /sys, /dev …).
 */
const PSEUDO_FS = new Map<number, string>([
  [0x9fa0, 'proc'], [0x62656572, 'sysfs'], [0x1cd1, 'devpts'], [0x27e0eb, 'cgroup'], [0x63677270, 'cgroup2'],
  [0x73636673, 'securityfs'], [0x64626720, 'debugfs'], [0x74726163, 'tracefs'], [0xcafe4a11, 'bpf'],
  [0x6165676c, 'pstore'], [0xde5e81e4, 'efivarfs'], [0x42494e4d, 'binfmt_misc'], [0x50495045, 'pipefs'],
]);

function unusable(role: string, dir: string, why: string): CrawlError {
  return new CrawlError(CRAWL_DIR_UNUSABLE, `${role} ${dir} ${why}`, { details: { role, dir } });
}

/** What a directory check found: the path, and the components that do not exist yet. */
export interface DirPlan {
  role: string;
  dir: string;
  /** Missing components, outermost first (created by createDirs). */
  missing: string[];
}

/**
 * Check that `dir` is, or can be created as, a writable directory with MIN_FREE_BYTES free. Reads
 * only (stat, access, statfs). `role` names the flag in messages ('--state', '--out').
 */
export async function checkDir(role: string, dirIn: string): Promise<DirPlan> {
  const dir = path.resolve(dirIn);
  const missing: string[] = [];
  let cur = dir;
  for (;;) {
    let st;
    try {
      st = await stat(cur);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && path.dirname(cur) !== cur) {
        missing.unshift(cur);
        cur = path.dirname(cur);
        continue;
      }
      if (code === 'ENOTDIR') throw unusable(role, dir, 'cannot be a directory: a component of the path is a file');
      throw unusable(role, dir, `cannot be checked: ${(e as Error).message}`);
    }
    if (!st.isDirectory()) {
      throw unusable(role, dir, cur === dir ? 'exists and is not a directory' : `cannot be created: ${cur} is not a directory`);
    }
    break;
  }
  const fs = await statfs(cur).catch((e: Error) => {
    throw unusable(role, dir, `cannot be checked: ${e.message}`);
  });
  const pseudo = PSEUDO_FS.get(Number(fs.type));
  if (pseudo !== undefined) throw unusable(role, dir, `is on the ${pseudo} pseudo file system (${cur}): choose a directory on a disk`);
  try {
    await access(cur, FS.W_OK | FS.X_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'is on a read-only file system' : 'is not writable';
    throw unusable(role, dir, cur === dir ? why : `cannot be created: ${cur} ${why}`);
  }
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < MIN_FREE_BYTES) {
    throw new CrawlError(
      CRAWL_DIR_FULL,
      `${role} ${dir}: its file system has ${free} bytes free, at least ${MIN_FREE_BYTES} (16 MiB) are needed`,
      { details: { role, dir, free } },
    );
  }
  return { role, dir, missing };
}

/**
 * Create the missing components of every plan (after every check passed). On a failure, the
 * components created so far are removed (innermost first) and CRAWL_DIR_UNUSABLE is thrown.
 */
export async function createDirs(plans: readonly DirPlan[]): Promise<void> {
  const made: string[] = [];
  try {
    for (const p of plans) {
      for (const d of p.missing) {
        try {
          await mkdir(d);
          made.push(d);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EEXIST' && (await stat(d)).isDirectory()) continue;
          throw unusable(p.role, p.dir, `cannot be created: ${(e as Error).message}`);
        }
      }
    }
  } catch (e) {
    for (const d of made.reverse()) await rmdir(d).catch(() => undefined);
    throw e;
  }
}

/** Refuse a status port that cannot be bound (in use, or privileged) before anything starts. */
export async function checkPortFree(key: string, port: number, host: string): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', (e: NodeJS.ErrnoException) =>
      reject(new CrawlError('CRAWL_CONFIG_INVALID', `${key} ${host}:${port} cannot be bound: ${e.code ?? e.message}`)));
    s.listen(port, host, () => s.close(() => resolve()));
  });
}
