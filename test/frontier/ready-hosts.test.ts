/**
 * The frontier's work on hand (Politeness.readyRanked, the pipeline's starvation signal): the
 * hosts with URLs queued in RAM — each takes at most one connection at a time (thesis VII.1), so
 * that is how many fetch slots RAM can fill — and, once a URL with B > B0 was taken in, only the
 * hosts with such a URL queued. Kept as two O(1) counters (pacing.ts hostsQueued /
 * hostsQueuedHigh); fast-check drives random sequences of admissions, robots answers (known,
 * failed, fetched, expiring), releases, fetch ends (success, retry, host error, drop) and clock
 * steps through a small host table (hosts evicted and failed as they go), and after every step
 * compares the counters with a model that knows only which URLs the API put into RAM and took out
 * (URLs left out — robots unknown, host or RAM full — are offered again by a rescan step). It also
 * holds the release to one request in flight per host, and every retried URL back in its queue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { AddResult, Politeness, type FetchOutcome } from '../../src/frontier/politeness/politeness.js';
import { resolveFrontierOptions } from '../../src/frontier/options.js';
import { fastOptions } from './fast-options.js';

const B0 = 10;
const HOSTS = 24;

type Op =
  | { t: 'add'; host: number; high: boolean; n: number }
  | { t: 'robots'; pick: number[] }
  | { t: 'rescan' }
  | { t: 'release'; max: number }
  | { t: 'done'; which: number; outcome: number }
  | { t: 'tick'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('add' as const), host: fc.integer({ min: 0, max: HOSTS - 1 }), high: fc.boolean(), n: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('robots' as const), pick: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 8 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('rescan' as const) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('release' as const), max: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('done' as const), which: fc.nat(), outcome: fc.integer({ min: 0, max: 9 }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 400 }) }) },
);

/** Outcome of a fetch by number: mostly success, else retry, host error (with and without retry), drop. */
function outcomeOf(k: number): FetchOutcome | undefined {
  switch (k) {
    case 0: case 1: case 2: case 3: return undefined;
    case 4: return {};
    case 5: case 6: return { retry: true };
    case 7: return { hostError: true, retry: true };
    case 8: return { hostError: true };
    default: return { drop: 'test-drop' };
  }
}

function run(ops: Op[]): void {
  // A small table: 24 host names through 16 entries (idle hosts evicted to make room), 2 host
  // errors fail a host (its queue dropped), failed entries and robots answers expire.
  const opts = resolveFrontierOptions(fastOptions({ b0: B0, ramUrls: 48, maxUrlsPerHost: 6, maxHosts: 16, maxHostErrors: 2, maxAttempts: 3, failedHostTtlMs: 300 }));
  /** The model: URLs in RAM and not in flight (what the API put in and took out). */
  const queued = new Set<FrontierUrl>();
  const inFlight: FrontierUrl[] = [];
  const dropped = new Set<FrontierUrl>();
  /** URLs not taken into RAM (robots unknown, host or RAM full), offered again by 'rescan' (as QR and BEAST are). */
  let parked: FrontierUrl[] = [];
  const offer = (u: FrontierUrl): void => {
    const r = pol.add(u, now);
    if (r === AddResult.Added) queued.add(u);
    else if (r === AddResult.NeedRobots || r === AddResult.HostFull || r === AddResult.RamFull) parked.push(u);
  };
  const pol = new Politeness(opts, (u) => {
    queued.delete(u);
    dropped.add(u);
  });
  let now = 1_000_000;
  let id = 0;
  const check = (step: number, o: Op): void => {
    const all = new Set<number>();
    const high = new Set<number>();
    for (const u of queued) {
      all.add(u.hostHi);
      if (u.budget > B0) high.add(u.hostHi);
    }
    const at = `after step ${step} (${JSON.stringify(o)})`;
    assert.equal(pol.hostsQueued, all.size, `hosts with URLs queued ${at}`);
    assert.equal(pol.hostsQueuedHigh, high.size, `hosts with a B > B0 URL queued ${at}`);
    assert.equal(pol.readyRanked(), pol.ranksPlds ? high.size : all.size, `readyRanked ${at}`);
  };
  const end = (u: FrontierUrl, outcome: FetchOutcome | undefined): void => {
    dropped.delete(u);
    pol.fetchDone(u, outcome, now);
    // A retry goes back to its host's queue unless fetchDone dropped it (max attempts, host failed).
    if (outcome?.retry === true && !dropped.has(u)) queued.add(u);
  };
  ops.forEach((o, step) => {
    switch (o.t) {
      case 'add':
        for (let k = 0; k < o.n; k++) {
          const h = o.host;
          const u = new FrontierUrl({ url: `http://h${h}.test/${id++}`, hostHi: h, hostLo: 3, pldHi: h % 4, pldLo: 5, budget: o.high ? 1000 : B0, admitted: 1 });
          offer(u);
        }
        break;
      case 'robots': {
        const reqs = pol.takeRobotsRequests(o.pick.length);
        reqs.forEach((q, k) => {
          const p = o.pick[k]!;
          const ip = `10.0.0.${q.hostHi % 3}`;
          if (p < 5) pol.robotsKnown(q.hostHi, q.hostLo, { rules: null, ip, expiresAt: p === 0 ? now + 300 : now + 5000 * p }, now);
          else if (p < 7) pol.robotsFailed(q.hostHi, q.hostLo, 'dns', now);
          else pol.scheduleRobotsFetch(q.hostHi, q.hostLo, ip, now); // released by 'release' below
        });
        break;
      }
      case 'rescan': {
        const again = parked;
        parked = [];
        for (const u of again) offer(u);
        break;
      }
      case 'release': {
        const out: FrontierUrl[] = [];
        const n = pol.nextReady(now, o.max, out);
        for (const u of out.slice(0, n)) {
          if (u.kind === UrlKind.Robots) {
            pol.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: now + 500 }, now);
            pol.fetchDone(u, undefined, now);
          } else {
            assert.ok(queued.delete(u), 'a released page was queued');
            assert.ok(!inFlight.some((x) => x.hostHi === u.hostHi), `one request in flight per host: ${u.url} released beside another of its host`);
            inFlight.push(u);
          }
        }
        break;
      }
      case 'done':
        if (inFlight.length > 0) end(inFlight.splice(o.which % inFlight.length, 1)[0]!, outcomeOf(o.outcome));
        break;
      case 'tick':
        now += o.ms;
        break;
    }
    check(step, o);
  });
  while (inFlight.length > 0) end(inFlight.pop()!, undefined);
  check(ops.length, { t: 'tick', ms: 0 });
}

test('hostsQueued / hostsQueuedHigh / readyRanked equal the model\'s hosts with URLs queued, through admissions, releases, retries, failures and evictions', () => {
  fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 300, size: 'max' }), (ops) => run(ops)), { numRuns: 300 });
});

test('one host with a large queue is one slot of work; many hosts with one URL each are many', () => {
  const pol = new Politeness(resolveFrontierOptions(fastOptions({ b0: B0, maxUrlsPerHost: 5000, ramUrls: 10_000 })), () => {});
  const now = 1_000_000;
  const put = (h: number, n: number, budget: number): void => {
    for (let k = 0; k < n; k++) {
      const u = new FrontierUrl({ url: `http://h${h}.test/${k}`, hostHi: h, hostLo: 1, pldHi: h, pldLo: 2, budget, admitted: 1 });
      if (pol.add(u, now) === AddResult.NeedRobots) {
        pol.robotsKnown(h, 1, { rules: null, ip: `10.0.${h >> 8}.${h & 255}`, expiresAt: Infinity }, now);
        assert.equal(pol.add(u, now), AddResult.Added);
      }
    }
  };
  put(1, 4000, 1000);
  assert.equal(pol.readyRanked(), 1, '4,000 URLs of one host fill one fetch slot');
  for (let h = 2; h < 202; h++) put(h, 1, 1000);
  assert.equal(pol.readyRanked(), 201, '200 more hosts with one URL each: 201 slots of work');
});
