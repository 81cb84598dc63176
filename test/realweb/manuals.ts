/**
 * The real manuals of test/fixtures/realweb (Python, PostgreSQL and Debian Reference HTML from
 * Debian's documentation packages; SOURCE.md there says which versions and under which licences):
 * unpacked from manuals.tar.zst into a directory, one document root per virtual host.
 */
import { spawn } from 'node:child_process';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decompress } from 'zstd-napi';

export const MANUALS_ARCHIVE = fileURLToPath(new URL('../fixtures/realweb/manuals.tar.zst', import.meta.url));

/** The virtual hosts of the archive: each is a directory of that name in it. */
export const MANUAL_HOSTS = ['docs.python.test', 'www.postgresql.test', 'reference.debian.test'] as const;

/** Unpacks the archive into `dir` (tar reads the decompressed bytes on its standard input). */
export async function unpackManuals(dir: string): Promise<void> {
  // --long=27 at compression (make-fixture.sh): the frame's window is 2^27.
  const tarBytes = decompress(await readFile(MANUALS_ARCHIVE), { windowLogMax: 27 });
  await new Promise<void>((resolve, reject) => {
    const tar = spawn('tar', ['-x', '-f', '-', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    tar.stderr.on('data', (d: Buffer) => (err += d.toString()));
    tar.on('error', reject);
    tar.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited ${code}: ${err}`))));
    tar.stdin.end(tarBytes);
  });
}

/** Every regular file under `root`, as paths relative to it with '/' separators. */
export async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(r);
      else if (e.isFile()) out.push(r);
    }
  };
  await walk('');
  return out.sort();
}

/** Size of a file (for byte-for-byte comparisons with captures). */
export async function fileSize(p: string): Promise<number> {
  return (await stat(p)).size;
}
