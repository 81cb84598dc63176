/**
 * Thread roles for CPU accounting (src/threads/thread-role.ts, bench/lib/thread-cpu.ts): with
 * DRUMCRAWL_THREAD_ROLES set, a DRUM thread announces its Linux thread id once per DRUM it hosts,
 * and the bench's sampler then names that thread's CPU by role; without the variable nothing is
 * announced.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { DrumProxy, DrumThread, PldStoreProxy } from '../../src/threads/drum/drum-proxy.js';
import { THREAD_ROLE_CHANNEL, type ThreadRoleAnnouncement } from '../../src/threads/thread-role.js';
import { ThreadCpuSampler, type RoleCost } from '../../bench/lib/thread-cpu.js';
import { projectCeiling } from '../../bench/lib/amdahl.js';

/** Open a DRUM and a STAR store in one DrumThread, run `during`, close both. */
async function withDrumThread(dir: string, during: () => Promise<void>): Promise<void> {
  const thread = new DrumThread();
  const drum = await DrumProxy.open(path.join(dir, 'content'), { ramBytes: 4 << 20, valueBytes: 'variable', buckets: 2 }, () => undefined, { thread });
  const star = await PldStoreProxy.open(path.join(dir, 'star'), { ramBytes: 4 << 20, drum: { buckets: 1 } }, thread);
  try {
    for (let i = 0; i < 2000; i++) drum.checkUpdate(i, 7, new Uint8Array([i & 255]), new Uint8Array([1]));
    await drum.merge();
    await during();
  } finally {
    await drum.close();
    await star.close();
  }
}

/**
 * Announcements heard while `f` runs (they cross threads asynchronously). `f` gets a function that
 * waits until `n` have been heard (no clock: on a loaded box they may take seconds); after `f`,
 * announcements still arriving within 300 ms are heard too (for a test that expects none).
 */
async function heard(f: (until: (n: number) => Promise<void>) => Promise<void>): Promise<ThreadRoleAnnouncement[]> {
  const got: ThreadRoleAnnouncement[] = [];
  const ch = new BroadcastChannel(THREAD_ROLE_CHANNEL);
  ch.onmessage = (e: unknown) => got.push((e as { data: ThreadRoleAnnouncement }).data);
  const until = async (n: number): Promise<void> => {
    while (got.length < n) await new Promise((r) => setTimeout(r, 10));
  };
  try {
    await f(until);
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    ch.close();
  }
  return got;
}

test('thread roles: off by default, a DRUM thread says nothing', { skip: process.platform !== 'linux' }, async () => {
  delete process.env.DRUMCRAWL_THREAD_ROLES;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-thread-role-'));
  try {
    const got = await heard(() => withDrumThread(dir, async () => undefined));
    assert.deepEqual(got, []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('thread roles: with DRUMCRAWL_THREAD_ROLES a DRUM thread names its tid per hosted DRUM, and the sampler charges its CPU to that role', { skip: process.platform !== 'linux' }, async () => {
  process.env.DRUMCRAWL_THREAD_ROLES = '1';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-thread-role-'));
  const sampler = new ThreadCpuSampler();
  try {
    let costs: ReturnType<ThreadCpuSampler['roleCosts']> = [];
    const live: number[] = [];
    const got = await heard((heardAll) => withDrumThread(dir, async () => {
      // the announcements (one per hosted DRUM) have reached this thread, and so the sampler, whose
      // channel listens beside this one
      await heardAll(2);
      while (![...sampler.roles.values()].some((r) => r.startsWith('drum:') && r.includes('+'))) await new Promise((r) => setTimeout(r, 10));
      const a = sampler.sample(0);
      const b = sampler.sample(100);
      live.push(...b.threads.keys());
      costs = sampler.roleCosts(a, b);
    }));
    const named = got.filter((m) => m.role !== undefined);
    assert.deepEqual(named.map((m) => m.role).sort(), ['drum:content', 'drum:star']);
    const tid = named[0]!.tid;
    assert.ok(named.every((m) => m.tid === tid), 'both DRUMs are hosted by one thread');
    // whatever else it said is its GC total (the thread's own isolate)
    assert.ok(got.filter((m) => m.tid !== process.pid).every((m) => m.tid === tid && (m.role !== undefined || (m.gcMs! >= 0 && m.gcCount! >= 1))), JSON.stringify(got));
    assert.notEqual(tid, process.pid, 'not the main thread');
    assert.ok(live.includes(tid), 'a thread of this process while it hosts the DRUMs');
    assert.ok(!existsSync(`/proc/self/task/${tid}`), 'gone once its DRUMs closed');
    assert.equal(sampler.roles.get(tid), 'drum:content+star');
    assert.deepEqual(costs.map((c) => c.role), ['main', 'drum:content+star', 'runtime']);
    // runtime is a difference of totals rounded to clock ticks (per thread and per process): it may
    // be a tick below zero over a window this short
    for (const c of costs) assert.ok(Number.isFinite(c.msPerPage) && (c.role === 'runtime' || c.msPerPage >= 0), `${c.role}: ${c.msPerPage}`);
  } finally {
    sampler.close();
    delete process.env.DRUMCRAWL_THREAD_ROLES;
    await rm(dir, { recursive: true, force: true });
  }
});

test('thread roles: a run hears the threads that announced before it began (the opening starts them)', { skip: process.platform !== 'linux' }, async () => {
  process.env.DRUMCRAWL_THREAD_ROLES = '1';
  // loaded as the crawler loads it, before any thread of the crawl starts
  const { RunMetrics } = await import('../../src/monitor/run-metrics.js');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-thread-role-'));
  try {
    let roles: string[] = [];
    await heard((heardAll) => withDrumThread(dir, async () => {
      await heardAll(2); // the DRUM thread has announced both DRUMs, before the run below exists
      const run = new RunMetrics();
      run.start();
      await new Promise((r) => setTimeout(r, 300));
      roles = Object.values(run.threads.roles);
      run.stop();
    }));
    assert.deepEqual(roles.sort(), ['drum:content+star', 'main'], 'the run names the DRUM thread');
  } finally {
    delete process.env.DRUMCRAWL_THREAD_ROLES;
    await rm(dir, { recursive: true, force: true });
  }
});

test('projection: the main thread, each DRUM thread, the archive thread and the whole CPU per page bound pages/s', () => {
  const role = (r: string, ms: number): RoleCost => ({ role: r, threads: 1, msPerPage: ms, userMsPerPage: ms, sysMsPerPage: 0, share: 0, gcMsPerPage: null });
  // total 1.0 ms/page: 8 cores → 8,000 by CPU; main 0.25 → 4,000; DRUM 0.05 → 20,000
  const p = projectCeiling([role('main', 0.25), role('parse', 0.5), role('drum:urlseen', 0.05), role('runtime', 0.2)], [2, 8, 64]);
  assert.deepEqual(p.ceilings, [
    { cores: 2, pagesPerSec: 2000, bound: 'cores' },
    { cores: 8, pagesPerSec: 4000, bound: 'main' },
    { cores: 64, pagesPerSec: 4000, bound: 'main' },
  ]);
  // a DRUM thread slower than the main thread is the bound
  const q = projectCeiling([role('main', 0.01), role('drum:urlseen', 0.1), role('parse', 0.1)], [64]);
  assert.deepEqual(q.ceilings, [{ cores: 64, pagesPerSec: 10000, bound: 'drum:urlseen' }]);
  // the WARC writer's thread is serial too; page workers are not
  const r = projectCeiling([role('main', 0.01), role('archive', 0.05), role('page', 0.2), role('drum:urlseen', 0.02)], [64]);
  assert.deepEqual(r.ceilings, [{ cores: 64, pagesPerSec: 20000, bound: 'archive' }]);
  assert.deepEqual(r.serialMsPerPage, { archive: 0.05, 'drum:urlseen': 0.02 });
});

test('GC time per role: the sampler charges the main thread its isolate\'s GC pauses (PerformanceObserver gc), at most its CPU', { skip: process.platform !== 'linux' }, async () => {
  const sampler = new ThreadCpuSampler();
  try {
    const a = sampler.sample(0);
    // garbage: scavenges for certain (a young generation is a few MiB)
    let keep = 0;
    for (let i = 0; i < 400_000; i++) keep += new Array(32).fill(i).length;
    assert.ok(keep > 0);
    // the thread posts its total every GC_REPORT_MS: wait for it (bounded, by event, not a fixed sleep)
    let b = sampler.sample(1000);
    for (let i = 0; i < 600 && (b.gc.get(process.pid) ?? 0) <= (a.gc.get(process.pid) ?? 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      b = sampler.sample(1000);
    }
    const main = sampler.roleCosts(a, b).find((c) => c.role === 'main')!;
    assert.ok(main.gcMsPerPage !== null && main.gcMsPerPage > 0, `main GC ms/page ${main.gcMsPerPage}`);
    const runtime = sampler.roleCosts(a, b).find((c) => c.role === 'runtime')!;
    assert.equal(runtime.gcMsPerPage, null);
  } finally {
    sampler.close();
  }
});
