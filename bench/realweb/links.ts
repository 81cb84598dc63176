/**
 * CPU per link on the manuals' large pages, in the parse step: the real ParsePool (one thread, the
 * crawler's batches; the checkout's code) fed every HTML page of the three manuals with its WARC
 * exchange, as bench/html/worker.ts feeds the bench web's pages. After a warm-up pass over all of
 * them (which also counts each page's extracted links), the pages with at least LARGE links and
 * those with fewer than SMALL are parsed in alternated rounds; the parse thread's CPU per page of
 * each group (/proc/self/task: the busiest thread but this one) gives the cost of a link:
 * (large − small) / (links per large page − links per small page). Bytes grow with links too, so
 * this is the cost of a link with the markup around it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ParsePool } from '../../src/threads/page/parse-pool.js';
import type { ParseTask } from '../../src/threads/page/parse-worker.js';
import { LinkTable } from '../../src/threads/links-codec.js';
import { filesUnder } from '../../test/realweb/manuals.js';
import { statCpu } from '../lib/thread-cpu.js';

const LARGE = 300;
const SMALL = 100;
const WINDOW = 16;

function threadCpu(): Map<number, number> {
  const m = new Map<number, number>();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      const c = statCpu(readFileSync(`/proc/self/task/${t}/stat`, 'latin1'));
      m.set(Number(t), c.user + c.sys);
    } catch {
      /* exited */
    }
  }
  return m;
}

async function feed(pool: ParsePool, tasks: ParseTask[]): Promise<number[]> {
  const links = new Array<number>(tasks.length).fill(0);
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    let outstanding = 0;
    const more = (): void => {
      while (outstanding < WINDOW && next < tasks.length) {
        const i = next++;
        outstanding++;
        pool.run(tasks[i]!).then((o) => {
          if (!o.ok) return reject(new Error(`${tasks[i]!.url}: ${o.message}`));
          links[i] = new LinkTable(o.table).info().extracted;
          outstanding--;
          if (next === tasks.length && outstanding === 0) resolve();
          else more();
        }, reject);
      }
    };
    more();
  });
  return links;
}

export interface LinkCost {
  pages: { large: number; small: number };
  linksPerPage: { large: number; small: number };
  kbPerPage: { large: number; small: number };
  /** parse thread CPU ms per page, median of the rounds */
  parseMsPerPage: { large: number; small: number };
  parseMsPerLink: number;
  rounds: { large: number; small: number }[];
}

export async function linkCost(manualsDir: string, hosts: readonly string[], rounds = 5): Promise<LinkCost> {
  const enc = new TextEncoder();
  const tasks: ParseTask[] = [];
  for (const host of hosts) {
    for (const rel of await filesUnder(path.join(manualsDir, host))) {
      if (!/\.html?$/.test(rel)) continue;
      const body = readFileSync(path.join(manualsDir, host, rel));
      const url = `http://${host}/${rel}`;
      tasks.push({
        url, body, decoded: body, html: true, follow: true, requisites: true,
        exchange: {
          ip: '127.0.0.2', dateMs: Date.now(), truncated: false,
          requestHead: enc.encode(`GET /${rel} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: drumcrawl-bench/0.1\r\n\r\n`),
          responseHead: enc.encode(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.byteLength}\r\n\r\n`),
        },
      });
    }
  }
  const pool = new ParsePool({ images: false, include: [], exclude: [], scope: 'any', scopeHosts: [], scopePlds: [], warc: { compression: 'gzip' } },
    { threads: 1, timeoutMs: 60_000, heapMb: 384 });
  try {
    await pool.warmup();
    const links = await feed(pool, tasks); // warm-up pass, and each page's link count
    const large = tasks.filter((_, i) => links[i]! >= LARGE);
    const small = tasks.filter((_, i) => links[i]! < SMALL);
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const linksOf = (group: ParseTask[]): number => mean(group.map((t) => links[tasks.indexOf(t)]!));
    const measure = async (group: ParseTask[]): Promise<number> => {
      const c0 = threadCpu();
      await feed(pool, group);
      const c1 = threadCpu();
      let parse = 0;
      for (const [tid, ms] of c1) if (tid !== process.pid) parse = Math.max(parse, ms - (c0.get(tid) ?? 0));
      return parse / group.length;
    };
    const out: { large: number; small: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      const a = r % 2 === 0 ? await measure(large) : 0;
      const b = await measure(small);
      out.push({ large: r % 2 === 0 ? a : await measure(large), small: b });
    }
    const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[xs.length >> 1]!;
    const ml = med(out.map((x) => x.large));
    const ms = med(out.map((x) => x.small));
    const ll = linksOf(large);
    const ls = linksOf(small);
    return {
      pages: { large: large.length, small: small.length },
      linksPerPage: { large: Math.round(ll), small: Math.round(ls) },
      kbPerPage: { large: Math.round(mean(large.map((t) => t.body.byteLength)) / 1024), small: Math.round(mean(small.map((t) => t.body.byteLength)) / 1024) },
      parseMsPerPage: { large: ml, small: ms },
      parseMsPerLink: (ml - ms) / (ll - ls),
      rounds: out,
    };
  } finally {
    await pool.close();
  }
}
