/**
 * What a byte of file I/O costs this process in CPU (user + system, ns per byte): writing new
 * pages, reading cached pages, overwriting cached pages in place, fsync, unlink. DRUM's merge moves
 * ~30 GB per round through the page cache at U = 1e9 (docs/drum.md, "Z format 2"), so these rates
 * decide much of its per-core cost.
 *
 *   node --import tsx bench/drum/pagecache.ts [blockBytes=262144] [totalBytes=2147483648] [file]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const B = Number(process.argv[2] ?? 262144);
const N = Number(process.argv[3] ?? 2 ** 31);
const f = process.argv[4] ?? path.join(os.tmpdir(), `pagecache-${process.pid}.bin`);
const buf = Buffer.alloc(B, 7);
const out: Record<string, unknown> = { blockBytes: B, totalBytes: N, loadavg: os.loadavg(), date: new Date().toISOString() };
const t = (label: string, fn: () => void): void => {
  const c0 = process.cpuUsage();
  const w0 = Date.now();
  fn();
  const c = process.cpuUsage(c0);
  out[label] = { userNsPerByte: (c.user * 1000) / N, systemNsPerByte: (c.system * 1000) / N, wallMs: Date.now() - w0 };
};
const fd = fs.openSync(f, 'w+');
t('writeNewPages', () => {
  for (let o = 0; o < N; o += B) fs.writeSync(fd, buf, 0, B, o);
});
t('readCached', () => {
  for (let o = 0; o < N; o += B) fs.readSync(fd, buf, 0, B, o);
});
t('overwriteCached', () => {
  for (let o = 0; o < N; o += B) fs.writeSync(fd, buf, 0, B, o);
});
t('fsync', () => fs.fsyncSync(fd));
fs.closeSync(fd);
t('unlink', () => fs.unlinkSync(f));
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
