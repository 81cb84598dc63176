/**
 * Crash-safe replacement of small files (manifests): write a temp file, fsync it, rename it over
 * the target, fsync the directory. After a crash at any instant the target holds either the old or
 * the new content in full, never a mix (rename(2) is atomic within one file system; the directory
 * fsync makes the rename itself durable).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IoCounters } from './io-counters.js';
import { createOwnFileSync } from './safe-fs.js';

/** fsync a directory so that creations, renames and unlinks inside it are durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Atomically replaces `file` with `data` (see the module comment). Synchronous: manifests are tiny. */
export function writeFileAtomicSync(file: string, data: Uint8Array | string, io?: IoCounters, kind = 'manifest'): void {
  const tmp = `${file}.tmp`;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  // Never through a link planted at the temp name (safe-fs.ts); rename replaces a link at `file`.
  const fd = createOwnFileSync(tmp);
  try {
    let off = 0;
    while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
  if (io !== undefined) {
    io.wrote(kind, bytes.length);
    io.synced(kind);
  }
}

/** Async form of writeFileAtomicSync (same protocol). */
export async function writeFileAtomic(file: string, data: Uint8Array | string, io?: IoCounters, kind = 'manifest'): Promise<void> {
  writeFileAtomicSync(file, data, io, kind);
}
