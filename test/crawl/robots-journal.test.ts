/**
 * The robots answer journal (src/robots/robots-journal.ts) and its replay by the robots stage:
 * - framing: a journal cut at any byte of its last record, or whose last record is overwritten from
 *   any byte on (a torn write), decodes to exactly the complete records before it (property test;
 *   fast-check prints its seed on failure);
 * - rotation: sealed files are deleted only by the release of the merge that covers them, and a
 *   reopen recovers every answer not released, in the order written, however many (300,000);
 * - replay: answers a process had journaled before it was SIGKILLed (no RobotsCache merge ran)
 *   are in RobotsCache after the next open — its hosts are answered without a robots.txt
 *   request — and are counted (`journalReplayed`); the journal is empty afterwards;
 * - checkpoint: a commit seals and fsyncs the journal without merging RobotsCache (a merge's cost
 *   grows with the authorities it holds); its answers come back from the journal after a kill, and
 *   the next merge releases the sealed file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { DnsCache } from '../../src/dns/index.js';
import { ALLOW_ALL } from '../../src/robots/index.js';
import { decodeJournal, encodeJournalRecord, JOURNAL_FILE, RobotsJournal } from '../../src/robots/robots-journal.js';
import { openRobotsStage, type RobotsStage, type RobotsStageFrontier } from '../../src/crawl/ports/robots-stage.js';
import { until } from './robots-rig.js';

const CHILD = fileURLToPath(new URL('./robots-journal-child.ts', import.meta.url));

const arbRecord = fc.record({
  hostHi: fc.nat({ max: 0xffffffff }),
  hostLo: fc.nat({ max: 0xffffffff }),
  entry: fc.uint8Array({ minLength: 9, maxLength: 300 }),
});

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.byteLength;
  }
  return out;
}

test('property: a journal torn anywhere in its last record replays exactly the complete records', () => {
  fc.assert(
    fc.property(fc.array(arbRecord, { minLength: 1, maxLength: 6 }), fc.constantFrom('cut', 'zeros', 'garbage'), fc.integer(), (recs, how, salt) => {
      const frames = recs.map((r) => encodeJournalRecord(r.hostHi, r.hostLo, r.entry));
      const whole = concat(frames);
      const before = whole.byteLength - frames.at(-1)!.byteLength;
      const complete = recs.slice(0, -1).map((r) => ({ hostHi: r.hostHi, hostLo: r.hostLo, entry: [...r.entry] }));
      const asPlain = (d: ReturnType<typeof decodeJournal>) => d.records.map((r) => ({ hostHi: r.hostHi, hostLo: r.hostLo, entry: [...r.entry] }));
      // Every crash point inside the last record: [before, whole.length).
      for (let at = before; at < whole.byteLength; at++) {
        let torn: Uint8Array;
        if (how === 'cut') torn = whole.slice(0, at);
        else {
          torn = whole.slice();
          // The bytes from `at` on were never written (zeros, as a file extended without its data
          // reads after a power loss) or hold other bytes (a block written in part).
          for (let i = at; i < torn.length; i++) torn[i] = how === 'zeros' ? 0 : (i * 31 + salt) & 0xff;
          // Bytes that happen to equal what was written are no tear (e.g. zeros over a zero entry).
          if (torn.subarray(at).every((b, i) => b === whole[at + i])) continue;
        }
        const d = decodeJournal(torn);
        assert.deepEqual(asPlain(d), complete, `${how} at byte ${at - before} of the last record`);
        assert.equal(d.validBytes, before);
      }
      // The intact journal replays every record.
      assert.equal(decodeJournal(whole).records.length, recs.length);
    }),
  );
});

test('journal rotation: sealed files go only with their release; a reopen recovers the rest in order', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-jnl-'));
  try {
    const e = (i: number) => new Uint8Array(12).fill(i);
    let { journal, recovered, upTo } = RobotsJournal.open(dir);
    assert.deepEqual(recovered, []);
    assert.equal(upTo, null);
    assert.equal(journal.seal(), null, 'nothing appended: nothing to seal');
    journal.append(1, 1, e(1));
    const g1 = journal.seal()!;
    journal.append(1, 2, e(2)); // arrives while the merge of g1 runs
    const g2 = journal.seal()!;
    journal.append(1, 3, e(3));
    journal.release(g1); // the first merge committed
    assert.deepEqual(journal.state().sealed, [g2]);
    // Killed here: g2's merge never committed, record 3 never sealed.
    ({ journal, recovered, upTo } = RobotsJournal.open(dir));
    assert.deepEqual(recovered.map((r) => r.hostLo), [2, 3]);
    assert.deepEqual(recovered.map((r) => r.entry[0]), [2, 3]);
    journal.release(upTo!);
    journal.append(1, 4, e(4));
    journal.close(true);
    assert.deepEqual(await readdir(dir), [], 'a durable close leaves no journal file');
    // A torn tail in the file a killed run left is cut; what precedes it is recovered.
    const good = encodeJournalRecord(9, 9, e(9));
    await writeFile(path.join(dir, JOURNAL_FILE), concat([good, encodeJournalRecord(9, 10, e(10)).subarray(0, 11)]));
    ({ journal, recovered } = RobotsJournal.open(dir));
    assert.deepEqual(recovered.map((r) => r.hostLo), [9]);
    journal.close(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a journal generation of 300,000 answers (a crawl killed between robots rounds) is recovered whole', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-jnl-big-'));
  try {
    const n = 300_000;
    const entry = new Uint8Array(12).fill(7);
    const parts: Uint8Array[] = [];
    for (let i = 0; i < n; i++) parts.push(encodeJournalRecord(5, i, entry));
    await writeFile(path.join(dir, JOURNAL_FILE), concat(parts));
    const { journal, recovered } = RobotsJournal.open(dir);
    assert.equal(recovered.length, n);
    assert.equal(recovered[n - 1]!.hostLo, n - 1);
    journal.close(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

class Recorder implements RobotsStageFrontier {
  queue: { hostHi: number; hostLo: number; host: string; origin: string }[] = [];
  fetches: number[] = [];
  known: number[] = [];
  ask(i: number): void {
    this.queue.push({ hostHi: 3, hostLo: i, host: `127.0.0.${i}`, origin: `http://127.0.0.${i}:8080` });
  }
  takeRobotsRequests(max: number) {
    return this.queue.splice(0, max);
  }
  scheduleRobotsFetch(_hi: number, lo: number): boolean {
    this.fetches.push(lo);
    return true;
  }
  robotsKnown(_hi: number, lo: number): void {
    this.known.push(lo);
  }
  robotsFailed(): void {}
}


test('robots stage: answers journaled by a process SIGKILLed before any RobotsCache merge are replayed at the next open', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-replay-'));
  const dns = new DnsCache();
  let stage: RobotsStage | null = null;
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, '5'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    // The killed run: five answers journaled, no merge, then SIGKILL.
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('answered')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before answering`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('robots-answers')), [JOURNAL_FILE]);
    // The resumed process.
    const g = new Recorder();
    stage = await openRobotsStage(dir, 64 << 20, g, dns);
    assert.equal(stage.totals().journalReplayed, 5);
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('robots-answers.jnl.')), [], 'the replayed journal is deleted once merged');
    for (let i = 1; i <= 6; i++) g.ask(i);
    await until(() => g.known.length === 5 && g.fetches.length === 1, stage);
    assert.deepEqual(g.fetches, [6], 'only the host without a journaled answer is asked');
    assert.deepEqual(g.known.sort((a, b) => a - b), [1, 2, 3, 4, 5]);
    await stage.commit();
    await stage.close();
    stage = await openRobotsStage(dir, 64 << 20, new Recorder(), dns);
    assert.equal(stage.totals().journalReplayed, 5, 'the count survives a commit and a reopen; nothing is replayed twice');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await stage?.close();
    dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('robots stage: a checkpoint makes the answers durable in the journal without a RobotsCache merge; after a kill they are replayed', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-ckpt-'));
  const dns = new DnsCache();
  let stage: RobotsStage | null = null;
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, '4', 'commit'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before answering`)));
    });
    assert.equal(line, 'answered merges=0', 'the commit merged RobotsCache');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('robots-answers')).sort(), [JOURNAL_FILE, `${JOURNAL_FILE}.1`], 'the commit sealed the journal');
    const g = new Recorder();
    stage = await openRobotsStage(dir, 64 << 20, g, dns);
    assert.equal(stage.totals().journalReplayed, 4);
    for (let i = 1; i <= 5; i++) g.ask(i);
    await until(() => g.known.length === 4 && g.fetches.length === 1, stage);
    assert.deepEqual(g.fetches, [5], 'only the host without a journaled answer is asked');
    // A checkpoint then a round's merge with nothing new since: the merge releases what the checkpoint sealed.
    stage.answered('http://127.0.0.9:8080', { rules: ALLOW_ALL, outcome: 'ok', expiresAt: Date.now() + 3_600_000, sitemaps: [] });
    await stage.commit();
    assert.equal((await readdir(dir)).filter((n) => n.startsWith('robots-answers.jnl.')).length, 1, 'sealed by the commit');
    const merges = stage.stats().cache.merges;
    await until(() => stage!.stats().cache.merges > merges, stage);
    assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('robots-answers.jnl.')), [], 'released by the next merge');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await stage?.close();
    dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});
