/**
 * RobotsCache + RobotsRequested (src/crawl/ports/robots-stage.ts, thesis VII.1) on real DRUMs in their
 * worker thread: a host whose robots.txt was answered is answered from RobotsCache afterwards —
 * in the same run (after an eviction from the frontier's RAM) and after the stage is closed and
 * reopened on the same directory (a resume) — an expired entry is asked again, and the entry codec
 * round-trips what the crawler stores (property test; fast-check prints its seed on failure).
 * Hosts are IP literals, which the DNS cache answers without a query.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { DnsCache } from '../../src/dns/index.js';
import { compileRobots, parseRobotsTxt, ALLOW_ALL, JOURNAL_FILE, encodeJournalRecord } from '../../src/robots/index.js';
import { decodeRobotsEntry, encodeRobotsEntry } from '../../src/robots/robots-entry.js';
import { openRobotsStage, ROBOTS_KEY_FILE, type RobotsStage, type RobotsStageFrontier, type RobotsTotals } from '../../src/crawl/ports/robots-stage.js';
import { formatRobotsDrums, renderRobotsDrums } from '../../src/monitor/robots-metrics.js';
import { until } from './robots-rig.js';

/** A frontier's robots side, recording what the stage does. */
class Recorder implements RobotsStageFrontier {
  queue: { hostHi: number; hostLo: number; host: string; origin: string }[] = [];
  fetches: string[] = [];
  known: { host: string; ip: string; disallowsPrivate: boolean; expiresAt: number }[] = [];
  failed: string[] = [];
  ask(i: number): void {
    this.queue.push({ hostHi: 7, hostLo: i, host: `127.0.0.${i}`, origin: `http://127.0.0.${i}:8080` });
  }
  takeRobotsRequests(max: number) {
    return this.queue.splice(0, max);
  }
  scheduleRobotsFetch(_hi: number, lo: number, ip: string): boolean {
    this.fetches.push(`${lo}@${ip}`);
    return true;
  }
  robotsKnown(_hi: number, lo: number, info: { rules: { isAllowed(p: string): boolean } | null; ip: string; expiresAt: number }): void {
    this.known.push({ host: String(lo), ip: info.ip, disallowsPrivate: info.rules !== null && !info.rules.isAllowed('/private/x'), expiresAt: info.expiresAt });
  }
  robotsFailed(_hi: number, lo: number, reason: string): void {
    this.failed.push(`${lo}:${reason}`);
  }
}


const RULES = compileRobots(parseRobotsTxt('User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: http://127.0.0.1/s.xml\n'), 'drumcrawl');

test('robots stage: asked once, then answered from RobotsCache in the run and after a reopen; expired entries are asked again', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-stage-'));
  const dns = new DnsCache();
  try {
    const f = new Recorder();
    let stage = await openRobotsStage(dir, 256 << 20, f, dns);
    for (let i = 1; i <= 20; i++) f.ask(i);
    await until(() => f.fetches.length === 20, stage);
    assert.equal(f.known.length, 0, 'nothing known before any answer');
    // The answers: host 1..19 valid for an hour, host 20 already expired.
    const now = Date.now();
    for (let i = 1; i <= 20; i++) stage.answered(`http://127.0.0.${i}:8080`, { rules: RULES, outcome: 'ok', expiresAt: i === 20 ? now - 1 : now + 3_600_000, sitemaps: [] });
    // The hosts come back (evicted from RAM, their next URL arrives): answered from RobotsCache.
    for (let i = 1; i <= 20; i++) f.ask(i);
    await until(() => f.known.length === 19 && f.fetches.length === 21, stage);
    assert.ok(f.known.every((k) => k.disallowsPrivate && k.ip.startsWith('127.0.0.')), 'the stored rules and the DNS answer');
    assert.equal(f.fetches[20], '20@127.0.0.20', 'only the expired host is asked again');
    let s = stage.stats();
    assert.equal(s.hits, 19);
    assert.equal(s.expired, 1);
    assert.equal(s.requested.reasked, 1, 'the expired host had been asked in this run');
    // A resume: closed (flushed) and opened again on the same directory.
    await stage.close();
    const g = new Recorder();
    stage = await openRobotsStage(dir, 256 << 20, g, dns);
    for (let i = 1; i <= 19; i++) g.ask(i);
    g.ask(21);
    await until(() => g.known.length === 19 && g.fetches.length === 1, stage);
    assert.deepEqual(g.fetches, ['21@127.0.0.21'], 'after the reopen only the new host is asked');
    s = stage.stats();
    assert.ok(s.cache.keys >= 20, `RobotsCache holds the answered hosts (${s.cache.keys})`);
    assert.equal(s.requested.firsts, 1);
    await stage.close();
  } finally {
    dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('robots stage: a host asked by an earlier run whose answer never reached RobotsCache is asked again and counted as lost', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-lost-'));
  const dns = new DnsCache();
  try {
    const f = new Recorder();
    let stage = await openRobotsStage(dir, 256 << 20, f, dns);
    f.ask(5);
    await until(() => f.fetches.length === 1, stage);
    await stage.close(); // no answer came (e.g. stopped before the fetch was released)
    const g = new Recorder();
    stage = await openRobotsStage(dir, 256 << 20, g, dns);
    g.ask(5);
    await until(() => g.fetches.length === 1, stage);
    assert.equal(stage.stats().requested.lostAsks, 1);
    await stage.close();
  } finally {
    dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('robots stage: one pump takes every host waiting in QD (a web of many new hosts does not queue behind a fixed intake)', { timeout: 600_000 }, async () => {
  // Issue #31: a fixed intake of 256 hosts per scheduler turn falls behind a web where each page
  // names ~10 new hosts, and every URL of those hosts waits in QR meanwhile. The shape here: 10,000
  // hosts waiting at once; one pump hands all of them to RobotsCache.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-intake-'));
  const dns = new DnsCache();
  try {
    const f = new Recorder();
    const stage = await openRobotsStage(dir, 256 << 20, f, dns);
    try {
      for (let i = 1; i <= 10_000; i++) f.queue.push({ hostHi: 9, hostLo: i, host: `10.0.${i >> 8}.${i & 255}`, origin: `http://10.0.${i >> 8}.${i & 255}` });
      stage.pump();
      assert.equal(f.queue.length, 0, 'QD is empty after one pump');
      assert.equal(stage.stats().checks, 10_000, 'every waiting host is a RobotsCache check');
    } finally {
      await stage.close();
    }
  } finally {
    dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('property: RobotsCache entries round-trip (rules, outcome, expiry, sitemaps)', () => {
  const line = fc.oneof(
    fc.constantFrom('User-agent: *', 'User-agent: drumcrawl', 'Crawl-delay: 3', 'Allow: /a$', 'Disallow: /'),
    fc.stringMatching(/^\/[a-z*$]{0,12}$/).map((p) => `Disallow: ${p}`),
    fc.stringMatching(/^\/[a-z*]{0,12}$/).map((p) => `Allow: ${p}`),
  );
  fc.assert(
    fc.property(
      fc.array(line, { maxLength: 30 }),
      fc.constantFrom('ok', 'CRAWL_ROBOTS_UNAVAILABLE', 'CRAWL_ROBOTS_UNREACHABLE'),
      fc.double({ min: 0, max: 4e12, noNaN: true }),
      fc.array(fc.webUrl(), { maxLength: 20 }),
      fc.array(fc.stringMatching(/^\/[a-z]{0,8}$/), { minLength: 1, maxLength: 8 }),
      (lines, outcome, expiresAt, sitemaps, probes) => {
        const rules = lines.length === 0 ? ALLOW_ALL : compileRobots(parseRobotsTxt(lines.join('\n')), 'drumcrawl');
        const back = decodeRobotsEntry(encodeRobotsEntry({ rules, outcome, expiresAt, sitemaps }));
        assert.equal(back.outcome, outcome);
        assert.equal(back.expiresAt, expiresAt);
        assert.deepEqual(back.sitemaps, sitemaps.slice(0, 16));
        assert.deepEqual([...back.rules.serialize()], [...rules.serialize()]);
        assert.equal(back.rules.crawlDelayMs, rules.crawlDelayMs);
        for (const p of probes) assert.equal(back.rules.isAllowed(p), rules.isAllowed(p), p);
      },
    ),
  );
});

test('RobotsCache entry: truncated or trailing bytes are CRAWL_ROBOTS_BAD_SERIALIZED', () => {
  const b = encodeRobotsEntry({ rules: RULES, outcome: 'ok', expiresAt: 1, sitemaps: ['http://x/s.xml'] });
  for (const bad of [b.subarray(0, b.length - 1), new Uint8Array([...b, 0]), b.subarray(0, 5)]) {
    assert.throws(() => decodeRobotsEntry(bad), (e: Error & { code?: string }) => e.code === 'CRAWL_ROBOTS_BAD_SERIALIZED');
  }
});

test('/metrics and stats: the robots DRUMs\' counters (hit rate, merges, bytes) are rendered', () => {
  const t: RobotsTotals = { checks: 200, hits: 150, expired: 5, asks: 50, lostAsks: 2, cacheKeys: 180, cacheMerges: 12, cacheBytes: 123456, requestedKeys: 52, requestedMerges: 9, requestedBytes: 4567, journalReplayed: 3 };
  const lines: string[] = [];
  renderRobotsDrums(t, (name, type, _help, value) => lines.push(`${type} drumcrawl_${name} ${value}`));
  for (const want of ['gauge drumcrawl_robotscache_hit_ratio 0.75', 'counter drumcrawl_robotscache_merges_total 12', 'counter drumcrawl_robotscache_bytes_total 123456',
    'counter drumcrawl_robotsrequested_asks_total 50', 'counter drumcrawl_robotsrequested_lost_asks_total 2', 'counter drumcrawl_robotsrequested_merges_total 9', 'counter drumcrawl_robotsrequested_bytes_total 4567', 'counter drumcrawl_robots_journal_replayed_total 3']) {
    assert.ok(lines.includes(want), want);
  }
  const text = formatRobotsDrums(t).join('\n');
  assert.match(text, /RobotsCache\s+180 hosts; 200 checks, 75\.0 % hits, 5 expired; 12 merges, 0\.1 MB/);
  assert.match(text, /RobotsReq\.\s+52 hosts; 50 asks \(2 after a lost answer\); 9 merges/);
  assert.match(text, /Robots jnl\.\s+3 answers replayed after a kill/);
});

test('robots stage: a state whose robots DRUMs were keyed per host (no robots-key file) is re-keyed by the authority; an unknown key is refused', { timeout: 600_000 }, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-robots-key-'));
  const dns = new DnsCache();
  try {
    const f = new Recorder();
    let stage = await openRobotsStage(dir, 256 << 20, f, dns);
    f.ask(4);
    await until(() => f.fetches.length === 1, stage);
    stage.answered('http://127.0.0.4:8080', { rules: RULES, outcome: 'ok', expiresAt: Date.now() + 3_600_000, sitemaps: [] });
    await stage.close();
    assert.equal((await readFile(path.join(dir, ROBOTS_KEY_FILE), 'utf8')).trim(), 'authority');
    // The same state as the host-keyed code left it: no key file, answers in the DRUMs and a journal.
    await rm(path.join(dir, ROBOTS_KEY_FILE));
    await writeFile(path.join(dir, JOURNAL_FILE), encodeJournalRecord(7, 4, encodeRobotsEntry({ rules: RULES, outcome: 'ok', expiresAt: Date.now() + 3_600_000, sitemaps: [] })));
    const g = new Recorder();
    stage = await openRobotsStage(dir, 256 << 20, g, dns);
    assert.equal(stage.stats().replayed, 0, 'the host-keyed journal is not replayed');
    g.ask(4);
    await until(() => g.fetches.length === 1, stage);
    assert.deepEqual(g.known, [], 'a host-keyed answer is not taken for an authority: its robots.txt is asked again');
    assert.equal(stage.stats().requested.lostAsks, 0);
    await stage.close();
    await writeFile(path.join(dir, ROBOTS_KEY_FILE), 'host\n');
    await assert.rejects(openRobotsStage(dir, 256 << 20, new Recorder(), dns), (e: Error & { code?: string }) => e.code === 'CRAWL_CHECKPOINT_VERSION' && /robots-key/.test(e.message));
  } finally {
    dns.close();
    await rm(dir, { recursive: true, force: true });
  }
});
