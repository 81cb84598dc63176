/**
 * bench/mem/probe.cjs — per-thread memory probe for the crawler process (issue #7).
 *
 * Loaded with `node --require bench/mem/probe.cjs`; worker threads inherit the parent's execArgv,
 * so it also runs at the start of every DRUM host thread and every piscina parse worker. When
 * DRUMCRAWL_MEMPROBE=<file> is set, each thread appends one JSON line every
 * DRUMCRAWL_MEMPROBE_MS (default 5000) ms: its V8 heap (used/committed, external, malloced), its
 * ArrayBuffers; the main thread adds /proc/self/status (VmRSS, RssAnon, RssFile, threads).
 * RSS minus the sum over isolates of (committed heap + ArrayBuffers) is native memory (malloc:
 * zstd, undici/llhttp, libuv, glibc arenas).
 *
 * DRUMCRAWL_MEMPROBE_SNAP=<seconds,...>: at those ages each thread writes a heap snapshot
 * (<file>.<thread>.<age>.heapsnapshot). Snapshots cost ~2x the heap in RAM and seconds of CPU.
 * Without DRUMCRAWL_MEMPROBE the probe does nothing.
 */
'use strict';
const out = process.env.DRUMCRAWL_MEMPROBE;
if (out) {
  const fs = require('node:fs');
  const path = require('node:path');
  const v8 = require('node:v8');
  const wt = require('node:worker_threads');
  const period = Number(process.env.DRUMCRAWL_MEMPROBE_MS || 5000);
  const snaps = (process.env.DRUMCRAWL_MEMPROBE_SNAP || '').split(',').filter(Boolean).map(Number);
  const t0 = Date.now();
  let name = 'main';
  if (!wt.isMainThread) {
    const wd = wt.workerData;
    if (wd && typeof wd === 'object' && typeof wd.dir === 'string') name = `drum-${wd.kind === 'star' ? 'star' : path.basename(wd.dir)}`;
    // piscina parse workers carry the pool's workerData (parse options); anything else is a
    // thread we did not start ourselves (e.g. tsx's module-loader hooks thread, one per isolate).
    else name = wd && typeof wd === 'object' && 'scopeHosts' in wd ? 'parse' : 'other';
  }
  const tag = `${name}#${wt.threadId}`;
  const procStatus = () => {
    try {
      const s = fs.readFileSync('/proc/self/status', 'latin1');
      const g = (k) => { const m = new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s); return m ? Number(m[1]) * 1024 : 0; };
      const th = /^Threads:\s+(\d+)/m.exec(s);
      return { vmRss: g('VmRSS'), rssAnon: g('RssAnon'), rssFile: g('RssFile'), vmHwm: g('VmHWM'), threads: th ? Number(th[1]) : 0 };
    } catch { return null; }
  };
  let lastSampleAt = 0;
  const sample = () => {
    if (Date.now() - lastSampleAt < period / 2) return;
    lastSampleAt = Date.now();
    const h = v8.getHeapStatistics();
    const mu = process.memoryUsage();
    const spaces = {};
    for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name.replace(/_space$/, '')] = s.space_used_size;
    const line = {
      at: Date.now(), t: Date.now() - t0, thread: tag, pid: process.pid,
      heapUsed: h.used_heap_size, heapTotal: h.total_heap_size, heapLimit: h.heap_size_limit,
      external: h.external_memory, malloced: h.malloced_memory, peakMalloced: h.peak_malloced_memory,
      arrayBuffers: mu.arrayBuffers, spaces,
      proc: wt.isMainThread ? procStatus() : undefined,
    };
    fs.appendFileSync(out, JSON.stringify(line) + '\n');
    while (snaps.length > 0 && Date.now() - t0 >= snaps[0] * 1000) {
      const age = snaps.shift();
      try { v8.writeHeapSnapshot(`${out}.${name}-${wt.threadId}.${age}.heapsnapshot`); } catch (e) { /* out of memory or disk: the probe must not kill the crawl */ }
    }
  };
  setInterval(sample, period).unref();
  // piscina workers block in Atomics.wait between tasks, so their timers rarely fire: sample also
  // when piscina polls for its next task (it calls receiveMessageOnPort through the module object).
  if (!wt.isMainThread) {
    let lastAt = Date.now();
    const orig = wt.receiveMessageOnPort;
    wt.receiveMessageOnPort = function (port) {
      if (Date.now() - lastAt >= period) {
        lastAt = Date.now();
        sample();
      }
      return orig(port);
    };
  }
  setTimeout(sample, 200).unref();
}
