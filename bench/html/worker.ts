/**
 * bench/html/worker — the parse worker's whole job per page as the crawl runs it: the real
 * ParsePool (one thread, the crawler's heap limits, `--ctpw` batches of ≤ `--batch` pages per worker), fed the bench
 * web's pages with their WARC exchange (request + response + metadata records, gzip level 1), so
 * the worker never waits for this thread. CPU per page of the parse thread (from /proc: GC and the
 * message hand-off included, unlike bench/html/floor.ts's best-of-5 loops), of the main thread
 * (packBatch + splitParseOutput + the promise), and wall time per page.
 *
 *   node --import tsx bench/html/worker.ts [--pages 400] [--rounds 5] [--ctpw 2] [--batch 8] [--window 16] [--heap-mb 96] [--out bench/results/html-worker.json]
 *
 * Rounds alternate with nothing else; the best and the median round are reported (shared box).
 */
import os from 'node:os';
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ParsePool } from '../../src/threads/page/parse-pool.js';
import type { ParseTask } from '../../src/threads/page/parse-worker.js';
import { simwebPages, charsetOf } from './corpus.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : dflt;
};
const PAGES = Number(arg('pages', '400'));
const ROUNDS = Number(arg('rounds', '5'));
const CTPW = Number(arg('ctpw', '2'));
const BATCH = Number(arg('batch', '8'));
// pages submitted and unanswered at any time (1: the worker waits for this thread after every page)
const WINDOW = Number(arg('window', '16'));
// the crawler's parse heap at --ram 1.5G with one worker is max(64, ram/4) = 384 MiB; 96 is plenty
const HEAP_MB = Number(arg('heap-mb', '96'));
const OUT = arg('out', 'bench/results/html-worker.json');

function threadCpu(): Map<number, number> {
  const m = new Map<number, number>();
  for (const t of readdirSync('/proc/self/task')) {
    const f = readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime + stime in clock ticks (USER_HZ = 100 on Linux): 10 ms resolution, hence many pages
    m.set(Number(t), ((Number(f[11]) + Number(f[12])) * 1000) / 100);
  }
  return m;
}

const pages = simwebPages('bench', 1, PAGES, Infinity, 7, 3);
const meanBytes = pages.reduce((a, p) => a + p.bytes.byteLength, 0) / pages.length;
const enc = new TextEncoder();
const reqHead = enc.encode('GET /p/1 HTTP/1.1\r\nHost: www.pld1.test:8080\r\nUser-Agent: drumcrawl-bench/0.1 (+https://example.test/bench)\r\nAccept: text/html\r\nAccept-Encoding: gzip, br\r\n\r\n');
const respHead = enc.encode('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 22000\r\nDate: Thu, 26 Nov 2026 00:00:00 GMT\r\nServer: simweb\r\n\r\n');
const tasks: ParseTask[] = pages.map((p) => ({
  url: p.url, body: p.bytes, decoded: p.bytes, charset: charsetOf(p.contentType), html: true, follow: true,
  exchange: { ip: '127.0.0.1', dateMs: Date.now(), requestHead: reqHead, responseHead: respHead, truncated: false },
}));

const pool = new ParsePool({ images: false, include: [], exclude: [], scope: 'any', scopeHosts: [], scopePlds: [], warc: { compression: 'gzip' } },
  { threads: 1, timeoutMs: 60_000, heapMb: HEAP_MB, concurrentTasksPerWorker: CTPW, batch: BATCH });
await pool.warmup();

/** Run every task once, keeping `window` outstanding (the pipeline keeps several too). */
async function round(window: number): Promise<{ links: number }> {
  let next = 0;
  let links = 0;
  await new Promise<void>((resolve, reject) => {
    let outstanding = 0;
    const feed = (): void => {
      while (outstanding < window && next < tasks.length) {
        outstanding++;
        pool.run(tasks[next++]!).then((o) => {
          if (!o.ok) return reject(new Error(o.message));
          links += new DataView(o.table.buffer, o.table.byteOffset).getUint32(0, true);
          outstanding--;
          if (next === tasks.length && outstanding === 0) resolve();
          else feed();
        }, reject);
      }
    };
    feed();
  });
  return { links };
}

await round(WINDOW); // warm-up: JIT, the deflate context
const rounds: { parseMs: number; mainMs: number; wallMs: number }[] = [];
let linksPerPage = 0;
for (let r = 0; r < ROUNDS; r++) {
  const c0 = threadCpu();
  const w0 = performance.now();
  linksPerPage = (await round(WINDOW)).links / tasks.length;
  const wall = performance.now() - w0;
  const c1 = threadCpu();
  let main = 0;
  let parse = 0;
  for (const [tid, ms] of c1) {
    const d = ms - (c0.get(tid) ?? 0);
    if (tid === process.pid) main = d;
    else parse = Math.max(parse, d); // the parse thread is by far the busiest other thread
  }
  rounds.push({ parseMs: parse / tasks.length, mainMs: main / tasks.length, wallMs: wall / tasks.length });
}
await pool.close();

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const result = {
  bench: 'html-worker',
  command: `node --import tsx bench/html/worker.ts --pages ${PAGES} --rounds ${ROUNDS} --ctpw ${CTPW} --batch ${BATCH} --window ${WINDOW} --heap-mb ${HEAP_MB}`,
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, loadavg: os.loadavg() },
  pages: tasks.length,
  meanBytes: Math.round(meanBytes),
  linksPerPage,
  parseThreadMsPerPage: { best: Math.min(...rounds.map((r) => r.parseMs)), median: med(rounds.map((r) => r.parseMs)) },
  mainThreadMsPerPage: { best: Math.min(...rounds.map((r) => r.mainMs)), median: med(rounds.map((r) => r.mainMs)) },
  wallMsPerPage: { best: Math.min(...rounds.map((r) => r.wallMs)), median: med(rounds.map((r) => r.wallMs)) },
  rounds,
  note: 'Parse thread CPU from /proc/self/task (10 ms ticks; a round is pages × ~1 ms). Shared box: compare trees A/B back to back.',
};
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
console.log(JSON.stringify({ ...result, rounds: undefined }, null, 2));
