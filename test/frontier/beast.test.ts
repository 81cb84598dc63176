import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Beast, FileBeastStore, FrontierUrl, MemoryBeastStore, encodeFrontierUrl, type BeastStore } from '../../src/frontier/index.js';
import { rng } from './sim.js';

const mk = (id: number, pld: number, budget: number, admitted: number): FrontierUrl =>
  new FrontierUrl({ url: `http://h.pld${pld}.test/${id}`, hostHi: pld, hostLo: 1, pldHi: pld, pldLo: 7, budget, admitted });

async function drain(b: Beast, batch = 1): Promise<{ u: FrontierUrl; pass: number; j: number }[]> {
  const out: { u: FrontierUrl; pass: number; j: number }[] = [];
  for (;;) {
    const got = await b.next(batch);
    if (got.length === 0) return out;
    const s = b.stats();
    for (const u of got) out.push({ u, pass: s.switches, j: s.j });
  }
}

test('placement follows VII.2: first B URLs of a PLD to Q2, next B to Q3 …, the rest to QF', async () => {
  const b = await Beast.open(new MemoryBeastStore(), { initialQueues: 4, maxQueues: 4 });
  for (let p = 1; p <= 12; p++) b.place(mk(p, 1, 3, p));
  assert.deepEqual(
    Array.from({ length: 12 }, (_, i) => b.targetOf(3, i + 1)),
    [1, 1, 1, 2, 2, 2, 3, 3, 3, -1, -1, -1],
  );
  const s = b.stats();
  assert.equal(s.queued, 9);
  assert.equal(s.qf, 3);
  assert.equal(b.targetOf(0, 1), -1, 'a zero budget waits in QF');
  const got = await drain(b);
  assert.deepEqual(got.map((g) => g.u.admitted), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 'FIFO by queue, QF last');
  // At the cap (j = 4) QF was spread over the existing queues instead of doubling.
  assert.equal(b.stats().doublings, 0);
  assert.equal(b.stats().respreads, 1);
});

test('j doubles each time Qj is emptied with QF non-empty, up to the cap; QF re-spread gives ≤ B per PLD per queue', async () => {
  const b = await Beast.open(new MemoryBeastStore(), { initialQueues: 2, maxQueues: 16 });
  // One PLD with budget 5 and 400 URLs: j=2 → 5 in Q2, 395 in QF.
  for (let p = 1; p <= 400; p++) b.place(mk(p, 9, 5, p));
  assert.equal(b.stats().qf, 395);
  const got = await drain(b);
  assert.equal(got.length, 400);
  const js = [...new Set(got.map((g) => g.j))];
  assert.deepEqual(js, [2, 4, 8, 16], 'j: 2 → 4 → 8 → 16, then capped');
  assert.equal(b.stats().doublings, 3);
  const perPass = new Map<number, number>();
  for (const g of got) perPass.set(g.pass, (perPass.get(g.pass) ?? 0) + 1);
  for (const [, n] of perPass) assert.ok(n <= 5, `≤ B per queue, got ${n}`);
  assert.deepEqual(got.map((g) => g.u.admitted), Array.from({ length: 400 }, (_, i) => i + 1), 'the PLD keeps its order');
});

test('a spam PLD discovered at a high rate gets at most 2·B URLs per queue read, good PLDs flow through', async () => {
  const r = rng(5);
  const B = 10;
  const b = await Beast.open(new MemoryBeastStore(), { initialQueues: 2, maxQueues: 64 });
  const P = new Map<number, number>();
  let id = 0;
  const discover = (pld: number): void => {
    const p = (P.get(pld) ?? 0) + 1;
    P.set(pld, p);
    b.place(mk(id++, pld, B, p));
  };
  for (let i = 0; i < 200; i++) discover(1 + Math.floor(r() * 2000));
  const spamPerPass = new Map<number, number>();
  let read = 0;
  let goodRead = 0;
  while (read < 30_000) {
    const got = await b.next(1);
    if (got.length === 0) break;
    read++;
    const pass = b.stats().switches;
    const u = got[0]!;
    if (u.pldHi === 0) spamPerPass.set(pass, (spamPerPass.get(pass) ?? 0) + 1);
    else goodRead++;
    // Each page links to 4 new URLs; half of all new URLs come from the spam farm (PLD 0).
    for (let k = 0; k < 4; k++) discover(r() < 0.5 ? 0 : 1 + Math.floor(r() * 2000));
  }
  const worst = Math.max(...spamPerPass.values());
  assert.ok(worst <= 2 * B, `spam per queue ${worst} ≤ 2B`);
  const spamRead = read - goodRead;
  assert.ok(spamRead < read * 0.05, `spam share of reads ${spamRead}/${read}`);
  assert.ok(b.stats().qf > 10_000, 'the farm waits in QF');
});

async function noLossRoundTrip(store: () => Promise<BeastStore>, n: number, crashAt?: number): Promise<void> {
  const r = rng(11);
  let st = await store();
  let b = await Beast.open(st, { initialQueues: 2, maxQueues: 32 });
  const P = new Map<number, number>();
  const all = new Set<string>();
  for (let i = 0; i < n; i++) {
    const pld = Math.floor(r() * 50);
    const p = (P.get(pld) ?? 0) + 1;
    P.set(pld, p);
    const u = mk(i, pld, 1 + (pld % 7), p);
    all.add(u.url);
    b.place(u);
  }
  await b.commitAppends();
  const seen: string[] = [];
  if (crashAt !== undefined) {
    // Read part of it, do NOT checkpoint, crash: everything read must come back.
    for (const u of await b.next(crashAt)) seen.push(u.url);
    st.releaseAll();
    st = await store();
    b = await Beast.open(st, { initialQueues: 2, maxQueues: 32 });
    seen.length = 0;
  }
  for (;;) {
    const got = await b.next(997);
    if (got.length === 0) break;
    for (const u of got) seen.push(u.url);
  }
  assert.equal(seen.length, all.size, 'nothing lost, nothing duplicated');
  assert.deepEqual(new Set(seen), all);
  await b.checkpoint();
  await b.close();
}

test('every URL placed comes out exactly once (memory store)', async () => {
  await noLossRoundTrip(async () => new MemoryBeastStore(), 20_000);
});

test('on disk: state (j, cursors) survives close/reopen, and an uncommitted read is re-delivered after a crash', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'beast-'));
  try {
    await noLossRoundTrip(async () => new FileBeastStore(path.join(dir, 'a'), { compression: 'zstd' }), 2_000);
    await noLossRoundTrip(async () => new FileBeastStore(path.join(dir, 'b'), { compression: 'none', blockBytes: 4096 }), 2_000, 700);
    // Reopen after a clean close keeps j and the position.
    const st = new FileBeastStore(path.join(dir, 'c'));
    const b = await Beast.open(st, { initialQueues: 2, maxQueues: 8 });
    for (let p = 1; p <= 100; p++) b.place(mk(p, 3, 4, p));
    for (let k = 0; k < 30; k++) await b.next(1);
    const before = b.stats();
    await b.checkpoint();
    await b.close();
    const b2 = await Beast.open(new FileBeastStore(path.join(dir, 'c')), { initialQueues: 2, maxQueues: 8 });
    const after = b2.stats();
    assert.equal(after.j, before.j);
    assert.equal(after.current, before.current);
    assert.equal(after.queued + after.qf, 70);
    const rest = await drain(b2, 64);
    assert.deepEqual(rest.map((g) => g.u.admitted), Array.from({ length: 70 }, (_, i) => i + 31));
    await b2.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('deferrals (host full in RAM) wait in QH and come back, without doubling j; only QF (over budget) doubles j', async () => {
  const b = await Beast.open(new MemoryBeastStore(), { initialQueues: 2, maxQueues: 64 });
  // 40 PLDs, 1 URL each, all within budget: they go to Q2.
  for (let p = 0; p < 40; p++) b.place(mk(p, p, 5, 1));
  const first = await b.next(40);
  assert.equal(first.length, 40);
  // The frontier had no room for 30 of them (their hosts full): they go back, many times over.
  for (let round = 0; round < 20; round++) {
    for (const u of first.slice(0, 30)) b.defer(u);
    const back = await drain(b, 64);
    assert.equal(back.length, 30, `round ${round}: every deferred URL comes back once`);
  }
  const s = b.stats();
  assert.equal(s.doublings, 0, 'j stays at 2: deferral-only re-spreads spread over the existing queues');
  assert.equal(s.j, 2);
  assert.ok(s.respreads >= 20);
  // An over-budget URL does double j at the next wrap (VII.2).
  for (let p = 1; p <= 20; p++) b.place(mk(1000 + p, 77, 2, p));
  assert.ok(b.stats().qf > 0);
  assert.equal((await drain(b, 64)).length, 20);
  assert.ok(b.stats().doublings >= 1);
});

test('deferred URLs of one PLD come back at most B per queue read (QH re-spread keeps the budget)', async () => {
  const B = 4;
  const b = await Beast.open(new MemoryBeastStore(), { initialQueues: 8, maxQueues: 8 });
  const urls = Array.from({ length: 30 }, (_, i) => mk(i, 5, B, 1));
  for (const u of urls) b.defer(u);
  const got = await drain(b, 1);
  assert.equal(got.length, 30);
  const perPass = new Map<number, number>();
  for (const g of got) perPass.set(g.pass, (perPass.get(g.pass) ?? 0) + 1);
  for (const [, n] of perPass) assert.ok(n <= B, `≤ B per queue read, got ${n}`);
  assert.equal(b.stats().doublings, 0);
});

test('on disk: appends not committed are cut at reopen, committed ones survive; a torn newest manifest slot is refused, naming it; once removed, the previous one is used', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'beast-'));
  try {
    const st = new FileBeastStore(dir, { compression: 'none', blockBytes: 1024 });
    const b = await Beast.open(st, { initialQueues: 4, maxQueues: 4 });
    for (let p = 1; p <= 200; p++) b.place(mk(p, p % 9, 3, Math.ceil(p / 9)));
    await b.commitAppends();
    // More admissions whose commit never happens (SIGKILL before commitAppends resolved).
    for (let p = 201; p <= 300; p++) b.place(mk(p, p % 9, 3, Math.ceil(p / 9)));
    st.releaseAll();
    const b2 = await Beast.open(new FileBeastStore(dir, { compression: 'none', blockBytes: 1024 }), { initialQueues: 4, maxQueues: 4 });
    const ids = (await drain(b2, 64)).map((g) => Number(g.u.url.slice(g.u.url.lastIndexOf('/') + 1))).sort((x, y) => x - y);
    assert.deepEqual(ids, Array.from({ length: 200 }, (_, i) => i + 1), 'exactly the committed URLs');
    await b2.close();

    // Two generations of the manifest; the newest slot is torn: the previous one is used.
    const dir2 = path.join(dir, 'torn');
    const s3 = new FileBeastStore(dir2, { compression: 'zstd' });
    const b3 = await Beast.open(s3, { initialQueues: 2, maxQueues: 2 });
    for (let p = 1; p <= 10; p++) b3.place(mk(p, 1, 100, p));
    await b3.commitAppends(); // generation 2 (the fresh manifest was 1)
    for (let p = 11; p <= 20; p++) b3.place(mk(p, 1, 100, p));
    await b3.commitAppends(); // generation 3, slot 1
    s3.releaseAll();
    const { readFileSync, writeFileSync } = await import('node:fs');
    const slot = path.join(dir2, 'beast.m1');
    const bytes = readFileSync(slot);
    writeFileSync(slot, bytes.subarray(0, bytes.length - 5)); // torn write
    // A torn newest slot looks like a damaged one: refused, naming it (it may hold a commit whose
    // URLs URLseen has committed since); removed by the operator after a power loss, the previous
    // generation is used.
    await assert.rejects(Beast.open(new FileBeastStore(dir2, { compression: 'zstd' }), { initialQueues: 2, maxQueues: 2 }),
      (e: Error & { code?: string }) => e.code === 'CRAWL_FRONTIER_MANIFEST' && e.message.startsWith(`${slot} is damaged`) && e.message.includes('remove'));
    const { rmSync } = await import('node:fs');
    rmSync(slot);
    const b4 = await Beast.open(new FileBeastStore(dir2, { compression: 'zstd' }), { initialQueues: 2, maxQueues: 2 });
    const got = (await drain(b4, 64)).map((g) => g.u.admitted);
    assert.deepEqual(got, Array.from({ length: 10 }, (_, i) => i + 1), 'generation 2: the first 10');
    await b4.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('commitAppends needs no lock: concurrent commits and reads keep every committed URL (retired queues with unsynced appends are synced)', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'beast-'));
  try {
    const r = rng(3);
    const mkStore = (): FileBeastStore => new FileBeastStore(dir, { compression: 'none', blockBytes: 512 });
    let st = mkStore();
    let b = await Beast.open(st, { initialQueues: 2, maxQueues: 8 });
    const committed = new Set<string>();
    const pending: string[] = [];
    const P = new Map<number, number>();
    let id = 0;
    const commits: Promise<void>[] = [];
    for (let round = 0; round < 60; round++) {
      for (let k = 0; k < 25; k++) {
        const pld = Math.floor(r() * 6);
        const p = (P.get(pld) ?? 0) + 1;
        P.set(pld, p);
        const u = mk(id++, pld, 2, p);
        pending.push(u.url);
        b.place(u);
      }
      const batch = pending.splice(0);
      commits.push(b.commitAppends().then(() => batch.forEach((x) => committed.add(x))));
      // Reads run while the commit's fsyncs are in flight (they retire queues with unsynced data).
      await b.next(20);
    }
    await Promise.all(commits);
    st.releaseAll(); // crash: no checkpoint, so everything read comes back too
    st = mkStore();
    b = await Beast.open(st, { initialQueues: 2, maxQueues: 8 });
    const out = new Set((await drain(b, 100)).map((g) => g.u.url));
    const lost = [...committed].filter((x) => !out.has(x));
    assert.deepEqual(lost, [], 'no committed URL lost');
    assert.equal(committed.size, id);
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('on disk: a ring step keeps the emptied queue (no retire); after a crash everything read since the checkpoint comes back, nothing before it; drained files go at the checkpoint', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'beast-'));
  try {
    const mkStore = (): FileBeastStore => new FileBeastStore(dir, { compression: 'zstd', blockBytes: 2048 });
    let st = mkStore();
    let b = await Beast.open(st, { initialQueues: 4, maxQueues: 4 });
    const P = new Map<number, number>();
    let id = 0;
    const add = (n: number): void => {
      for (let k = 0; k < n; k++) {
        const pld = id % 13;
        const p = (P.get(pld) ?? 0) + 1;
        P.set(pld, p);
        b.place(mk(id++, pld, 3, p));
      }
    };
    const idOf = (u: FrontierUrl): number => Number(u.url.slice(u.url.lastIndexOf('/') + 1));
    add(400);
    await b.commitAppends();
    // B = 3 over 13 PLDs: Q2..Q4 get 39 URLs each, the rest waits in QF. Read exactly Q2..Q4.
    const before = new Set((await b.next(117)).map(idOf));
    assert.equal(before.size, 117);
    const { readdir } = await import('node:fs/promises');
    const filesBefore = (await readdir(path.join(dir, 'q'))).length;
    await b.checkpoint();
    const filesAfter = (await readdir(path.join(dir, 'q'))).length;
    assert.ok(filesAfter < filesBefore, `drained queues deleted at the checkpoint (${filesBefore} → ${filesAfter})`);
    const since = new Set((await b.next(100)).map(idOf));
    assert.ok(b.stats().switches > 4, 'the ring has wrapped at least once');
    add(50); // some land in queues already emptied in this round
    await b.commitAppends();
    st.releaseAll();
    st = mkStore();
    b = await Beast.open(st, { initialQueues: 4, maxQueues: 4 });
    const out = (await drain(b, 64)).map((g) => idOf(g.u));
    const outSet = new Set(out);
    assert.equal(out.length, outSet.size, 'no URL twice');
    for (const x of since) assert.ok(outSet.has(x), `read since the checkpoint, comes back: ${x}`);
    for (const x of before) assert.ok(!outSet.has(x), `read before the checkpoint, gone: ${x}`);
    assert.equal(outSet.size, 450 - 117);
    await b.checkpoint();
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('on disk: a crash right after a re-spread (old QF still named as drain, targets unsynced) loses nothing', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'beast-'));
  try {
    const mkStore = (): FileBeastStore => new FileBeastStore(dir, { compression: 'none', blockBytes: 1024 });
    let st = mkStore();
    let b = await Beast.open(st, { initialQueues: 2, maxQueues: 8 });
    for (let p = 1; p <= 300; p++) b.place(mk(p, p % 3, 4, Math.ceil(p / 3)));
    await b.commitAppends();
    assert.ok(b.stats().qf > 0);
    const read: FrontierUrl[] = [];
    while (b.stats().respreads === 0) read.push(...(await b.next(1)));
    const { readdir } = await import('node:fs/promises');
    const files = await readdir(path.join(dir, 'q'));
    assert.ok(files.some((n) => n.startsWith('f')), 'old QF still on disk');
    st.releaseAll();
    st = mkStore();
    b = await Beast.open(st, { initialQueues: 2, maxQueues: 8 });
    const ids = new Set((await drain(b, 50)).map((g) => Number(g.u.url.slice(g.u.url.lastIndexOf('/') + 1))));
    assert.deepEqual([...ids].sort((x, y) => x - y), Array.from({ length: 300 }, (_, i) => i + 1), 'every URL comes back (those read before the crash too: no checkpoint)');
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('BEAST manifest slots: every cut and every flipped byte of either slot gives the newest commit, or CRAWL_FRONTIER_MANIFEST naming the slot — never an older commit in silence', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'beast-slots-'));
  const { readFileSync, writeFileSync, cpSync } = await import('node:fs');
  try {
    const base = path.join(dir, 'base');
    const s = new FileBeastStore(base, { compression: 'none' });
    const b = await Beast.open(s, { initialQueues: 2, maxQueues: 2 });
    for (let p = 1; p <= 10; p++) b.place(mk(p, 1, 100, p));
    await b.commitAppends(); // generation 2, slot 0
    for (let p = 11; p <= 20; p++) b.place(mk(p, 1, 100, p));
    await b.commitAppends(); // generation 3, slot 1: the newest
    s.releaseAll();
    let n = 0;
    for (const slotName of ['beast.m0', 'beast.m1']) {
      const size = readFileSync(path.join(base, slotName)).length;
      for (let at = 0; at < size; at += 3) {
        for (const how of ['cut', 'flip'] as const) {
          const d = path.join(dir, `c${n++}`);
          cpSync(base, d, { recursive: true });
          const slot = path.join(d, slotName);
          const bytes = readFileSync(slot);
          if (how === 'cut') writeFileSync(slot, bytes.subarray(0, at));
          else {
            bytes[at] = bytes[at]! ^ 0x10;
            writeFileSync(slot, bytes);
          }
          const label = `${slotName} ${how} at ${at}`;
          try {
            const b2 = await Beast.open(new FileBeastStore(d, { compression: 'none' }), { initialQueues: 2, maxQueues: 2 });
            const got = (await drain(b2, 64)).map((g) => g.u.admitted).sort((x, y) => x - y);
            await b2.close();
            assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => i + 1), `${label}: opened, so with the newest commit`);
          } catch (e) {
            const err = e as Error & { code?: string };
            if (err.code === 'ERR_ASSERTION') throw e;
            assert.equal(err.code, 'CRAWL_FRONTIER_MANIFEST', `${label}: ${err.message}`);
            assert.ok(err.message.includes(slotName), `${label}: names the slot: ${err.message}`);
          }
          await rm(d, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('deferrals of full hosts are re-read as fast as the crawl moves, not at every wrap; each comes back once its host has room', async () => {
  // One host holds its full share in RAM and 50,000 more URLs wait as deferrals (a page listing
  // 490,000 links to its own site does this), while the ring is empty: every read call wraps.
  let now = 0;
  let full = true;
  const store = new MemoryBeastStore();
  const b = await Beast.open(store, { initialQueues: 2, maxQueues: 8, hostFull: () => full, now: () => now });
  const N = 50_000;
  // A deferral's bytes as the memory store counts them: the record (52–56 bytes here) and its frame.
  const RECORD_BYTES = encodeFrontierUrl(mk(N, 1, 1_000_000, 1)).length + 4;
  for (let i = 0; i < N; i++) b.defer(mk(i, 1, 1_000_000, 1));
  const bytesOf = (): number => store.io().bytesRead;
  const before = bytesOf();
  // 2,000 read calls, 1 ms apart: the host stays full, so nothing moves and nothing is handed out.
  for (let k = 0; k < 2000; k++) {
    assert.equal((await b.next(100)).length, 0);
    now += 1;
  }
  const rereads = (bytesOf() - before) / (N * RECORD_BYTES);
  // Once at the first wrap, then once per DEFERRAL_INTERVAL_MS (1 s): about 3 reads of QN over
  // 2 s, not one per call (2,000 re-reads of 50,000 records each at every wrap).
  assert.ok(rereads < 6, `QN re-read ${rereads.toFixed(1)} times over 2,000 calls`);
  // The host gets room: every deferral comes back, within the interval, each exactly once.
  full = false;
  const seen = new Set<string>();
  for (let k = 0; k < 3000 && seen.size < N; k++) {
    for (const u of await b.next(1000)) {
      assert.ok(!seen.has(u.url), `${u.url} handed out twice`);
      seen.add(u.url);
    }
    now += 1;
  }
  assert.equal(seen.size, N, 'every deferral came back');
  assert.equal(b.length, 0);
});
