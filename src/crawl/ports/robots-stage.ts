/**
 * The robots stage of Fig. 2 (thesis VII.1) between the frontier's robots gate and the robots.txt
 * fetches. URLs whose host has no robots answer in the frontier's RAM host table wait in QR on disk
 * and their host comes out of the frontier once per authority it needs (takeRobotsRequests, QD).
 * The robots DRUMs are keyed by the authority (scheme, host and port, robotsAuthorityOf; RFC 9309
 * §2.3: a robots.txt governs only the service it was fetched from), not by the host: `http://a/`,
 * `https://a/` and `http://a:8080/` have three entries. Here:
 *
 *   1. each such host goes, in batches, through a RobotsCache check (robots-cache.ts);
 *   2. a hit whose entry has not expired is answered from it: DNS (the bounded DNS cache) for the
 *      host's IP, then frontier.robotsKnown — no robots.txt request;
 *   3. a miss or an expired entry goes through a RobotsRequested check+update (robots-requested.ts),
 *      and then DNS and frontier.scheduleRobotsFetch, as before: the fetch comes out of nextReady;
 *   4. every robots.txt answer (answered()) is first appended to the answer journal
 *      (robots-journal.ts, one synchronous write), then an update of RobotsCache, so the host's next
 *      request — after its eviction from RAM, a QR rescan, a restart or a SIGKILL — is a hit. The
 *      caller (frontier-port.ts robotsDone) calls answered() before frontier.robotsKnown releases
 *      the host's URLs, so no page of the host is fetched on an answer a kill could lose.
 *
 * Batching: a round merges RobotsCache (its checks' results arrive in the merge), then, if any
 * misses were found, RobotsRequested. A round starts when checks wait and either RobotsCache's
 * largest bucket reached r (needsMerge) or the oldest waiting check is `wait` old, with wait = 4 ×
 * the last round's duration, between 20 ms and 2 s: the hosts' URLs wait in QR meanwhile, and the
 * DRUM thread spends at most about a fifth of its time on these merges. Answers waiting without
 * checks start a round after max(250 ms, wait). Each merge of RobotsCache seals the journal first
 * and deletes the sealed file once the merge has committed; at open, what a killed run left in the
 * journal is replayed into RobotsCache and merged before the crawl asks anything (openRobotsStage).
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../../errors.js';
import { writeFileAtomic } from '../../disk/index.js';
import type { DnsCache } from '../../dns/index.js';
import type { DrumThread } from '../../threads/drum/drum-proxy.js';
import {
  RobotsCache, RobotsJournal, RobotsRequested, JOURNAL_FILE, decodeRobotsEntry, emptyRobotsTotals, encodeRobotsEntry, readRobotsTotals, sealedTotals, ROBOTS_TOTALS_FILE,
  type JournalRecord, type RobotsEntry, type RobotsRules, type RobotsTotals,
} from '../../robots/index.js';
import { ramPlan } from '../../budget/ram-budget.js';
import { fingerprintInto } from '../../url/index.js';
import { openMark } from '../../monitor/open-trace.js';

/** The frontier calls of the robots side (src/frontier/frontier.ts). */
export interface RobotsStageFrontier {
  /** `origin`: the authority asked (robotsAuthorityOf's string, the RobotsCache key's source) */
  takeRobotsRequests(max: number): { hostHi: number; hostLo: number; host: string; origin: string }[];
  scheduleRobotsFetch(hostHi: number, hostLo: number, ip: string): boolean;
  robotsKnown(hostHi: number, hostLo: number, info: { rules: RobotsRules | null; ip: string; crawlDelayMs?: number; expiresAt: number; origin?: string }): void;
  robotsFailed(hostHi: number, hostLo: number, reason: string): void;
}

const MIN_WAIT_MS = 20;
const MAX_WAIT_MS = 2000;
const UPDATE_WAIT_MS = 250;
/**
 * Hosts taken from the frontier per pump call: all of QD (bounded by the host table), in one go.
 * A fixed intake per scheduler turn (it was 256) starves a web of many hosts: at ~10 new hosts per
 * page the hosts waiting for their robots answer grow faster than the intake takes them, and every
 * URL of those hosts waits in QR meanwhile (issue #31: 593,779 URLs queued, 0 hosts active). A
 * check is a few bytes appended to RobotsCache's buffer (its R bounds them; a full bucket starts the
 * round), so taking them all costs little per call.
 */
const TAKE = Number.MAX_SAFE_INTEGER;

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * aux of a check / ask: "<hostHi> <hostLo> <host> <authority>" — the frontier's host key (the DRUM
 * key is the authority's), the name to resolve, and the authority answered. Lives only in the
 * DRUM's buffers until the merge that answers it.
 */
function auxOf(hostHi: number, hostLo: number, host: string, authority: string): Uint8Array {
  return enc.encode(`${hostHi >>> 0} ${hostLo >>> 0} ${host} ${authority}`);
}

interface Asked { hostHi: number; hostLo: number; host: string; authority: string }

function splitAux(aux: Uint8Array): Asked {
  const [hi, lo, host, authority] = dec.decode(aux).split(' ');
  return { hostHi: Number(hi), hostLo: Number(lo), host: host ?? '', authority: authority ?? '' };
}

const keyScratch = new Uint32Array(2);

/** The robots DRUMs' key of an authority (robotsAuthorityOf's string). */
export function robotsKeyOf(authority: string): [number, number] {
  fingerprintInto(authority, keyScratch, 0);
  return [keyScratch[0]!, keyScratch[1]!];
}

export interface RobotsStageStats {
  /** authorities checked in RobotsCache, answered from it (unexpired), found expired */
  checks: number;
  hits: number;
  expired: number;
  /** authorities sent to RobotsRequested (each then asked for robots.txt) */
  asks: number;
  rounds: number;
  lastRoundMs: number;
  /** answers replayed from the journal at open (a killed run's answers not yet merged) */
  replayed: number;
}

export { ROBOTS_TOTALS_FILE, emptyRobotsTotals, readRobotsTotals, type RobotsTotals } from '../../robots/index.js';

export class RobotsStage {
  private base: RobotsTotals = emptyRobotsTotals();
  private stateDir: string | null = null;
  private pendingChecks = 0;
  private firstCheckAt = 0;
  private pendingUpdates = 0;
  private firstUpdateAt = 0;
  /** asks (st.asks) covered by a RobotsRequested merge already called */
  private asksMerged = 0;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failure: Error | null = null;
  private dnsOutstanding = 0;
  private lastRoundMs = 0;
  private closed = false;
  private readonly st: RobotsStageStats = { checks: 0, hits: 0, expired: 0, asks: 0, rounds: 0, lastRoundMs: 0, replayed: 0 };

  private cache!: RobotsCache;
  private requested!: RobotsRequested;
  private journal!: RobotsJournal;

  constructor(
    private readonly f: RobotsStageFrontier,
    private readonly dns: DnsCache,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The two DRUMs, opened with this stage's onCheck / onAsk, the journal, and where totals live (openRobotsStage). */
  attach(cache: RobotsCache, requested: RobotsRequested, journal: RobotsJournal, stateDir: string): void {
    this.cache = cache;
    this.requested = requested;
    this.journal = journal;
    this.stateDir = stateDir;
    this.base = readRobotsTotals(stateDir);
  }

  /**
   * A killed run's journal (RobotsJournal.open's `recovered`) into RobotsCache, merged (committed)
   * before the crawl asks anything; then its files are deleted. A record whose value does not decode
   * (a format this code does not read) is skipped: that host is asked again.
   */
  async replay(recovered: readonly JournalRecord[], upTo: number | null): Promise<void> {
    for (const r of recovered) {
      try {
        decodeRobotsEntry(r.entry);
      } catch {
        continue;
      }
      this.cache.updateEncoded(r.hostHi, r.hostLo, r.entry);
      this.st.replayed++;
    }
    if (upTo === null) return;
    await this.cache.merge();
    this.journal.release(upTo);
  }

  /** Counters over all runs (the last commit's plus this run's); keys as of the last merge. */
  totals(): RobotsTotals {
    const b = this.base;
    const c = this.cache.stats();
    const r = this.requested.stats();
    const bytes = (x: { bytesRead?: number; bytesWritten?: number }): number => (x.bytesRead ?? 0) + (x.bytesWritten ?? 0);
    return {
      checks: b.checks + this.st.checks, hits: b.hits + this.st.hits, expired: b.expired + this.st.expired,
      asks: b.asks + this.st.asks, lostAsks: b.lostAsks + r.lostAsks,
      cacheKeys: c.keys, cacheMerges: b.cacheMerges + c.merges, cacheBytes: b.cacheBytes + bytes(c),
      requestedKeys: r.keys, requestedMerges: b.requestedMerges + r.merges, requestedBytes: b.requestedBytes + bytes(r),
      journalReplayed: b.journalReplayed + this.st.replayed,
    };
  }

  /** RobotsCache's answer for one checked authority (called during the cache merge). */
  onCheck(keyHi: number, keyLo: number, entry: RobotsEntry | null, aux: Uint8Array): void {
    const now = this.clock();
    if (entry !== null && entry.expiresAt > now) {
      this.st.hits++;
      const { hostHi, hostLo, host, authority } = splitAux(aux);
      this.resolve(host, (ip) => this.f.robotsKnown(hostHi, hostLo, { rules: entry.rules, ip, crawlDelayMs: entry.rules.crawlDelayMs, expiresAt: entry.expiresAt, origin: authority }), hostHi, hostLo);
      return;
    }
    if (entry !== null) this.st.expired++;
    this.st.asks++;
    this.requested.checkUpdate(keyHi, keyLo, now, aux);
  }

  /** RobotsRequested's answer for one asked authority (called during its merge): fetch its robots.txt. */
  onAsk(_keyHi: number, _keyLo: number, _askedBefore: number | null, aux: Uint8Array): void {
    const { hostHi, hostLo, host } = splitAux(aux);
    this.resolve(host, (ip) => {
      this.f.scheduleRobotsFetch(hostHi, hostLo, ip);
    }, hostHi, hostLo);
  }

  private resolve(host: string, then: (ip: string) => void, hostHi: number, hostLo: number): void {
    this.dnsOutstanding++;
    void this.dns.resolve(host).then((a) => {
      openMark('robots-dns');
      this.dnsOutstanding--;
      if (this.closed) return;
      if ('ip' in a) then(a.ip);
      else this.f.robotsFailed(hostHi, hostLo, a.error);
    });
  }

  /**
   * Takes the frontier's robots requests into RobotsCache checks and starts a round when one is
   * due. Called by the scheduler on each turn (and by a timer while work waits). Throws the error
   * of a failed round: a robots DRUM that cannot merge stops the crawl.
   */
  pump(): void {
    if (this.failure !== null) throw this.failure;
    if (this.closed) return;
    const reqs = this.f.takeRobotsRequests(TAKE);
    if (reqs.length > 0) {
      if (this.pendingChecks === 0) this.firstCheckAt = this.clock();
      for (const r of reqs) {
        const [hi, lo] = robotsKeyOf(r.origin);
        this.cache.check(hi, lo, auxOf(r.hostHi, r.hostLo, r.host, r.origin));
      }
      this.pendingChecks += reqs.length;
      this.st.checks += reqs.length;
    }
    this.maybeRound();
  }

  /**
   * A robots.txt answer for the authority (robotsAuthorityOf's string): appended to the journal
   * (synchronously: when this returns, a SIGKILL no longer loses it), then RobotsCache keeps it
   * (merged at the next round).
   */
  answered(authority: string, entry: RobotsEntry): void {
    if (this.closed) return;
    const value = encodeRobotsEntry(entry);
    const [hi, lo] = robotsKeyOf(authority);
    this.journal.append(hi, lo, value);
    if (this.pendingUpdates === 0) this.firstUpdateAt = this.clock();
    this.pendingUpdates++;
    this.cache.updateEncoded(hi, lo, value);
    this.maybeRound();
  }

  private get waitMs(): number {
    return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, 4 * this.lastRoundMs));
  }

  private maybeRound(): void {
    if (this.running !== null || this.closed) return;
    const now = this.clock();
    const w = this.waitMs;
    const checksDue = this.pendingChecks > 0 && (this.cache.needsMerge || now - this.firstCheckAt >= w);
    const updatesDue = this.pendingUpdates > 0 && now - this.firstUpdateAt >= Math.max(UPDATE_WAIT_MS, w);
    if (checksDue || updatesDue) {
      this.running = this.round().then(
        () => undefined,
        (e: Error) => {
          this.failure ??= e;
        },
      ).finally(() => {
        this.running = null;
        this.maybeRound();
      });
      return;
    }
    if ((this.pendingChecks > 0 || this.pendingUpdates > 0) && this.timer === null) {
      const at = this.pendingChecks > 0 ? this.firstCheckAt + w : this.firstUpdateAt + Math.max(UPDATE_WAIT_MS, w);
      this.timer = setTimeout(() => {
        this.timer = null;
        this.maybeRound();
      }, Math.max(1, at - now));
      this.timer.unref();
    }
  }

  private async round(): Promise<void> {
    const t0 = performance.now();
    this.pendingChecks = 0;
    this.pendingUpdates = 0;
    openMark('robots-round');
    await this.mergeCache();
    openMark('robots-cache-merged');
    await this.mergeAsks();
    openMark('robots-round-done');
    this.lastRoundMs = performance.now() - t0;
    this.st.rounds++;
    this.st.lastRoundMs = this.lastRoundMs;
  }

  /**
   * Merges RobotsCache: the journal is sealed first (the merge ships every update made so far, so
   * the sealed file holds only answers this merge commits) and its sealed files are deleted once
   * the merge has committed.
   */
  private async mergeCache(): Promise<void> {
    // Nothing new since a checkpoint sealed the journal: this merge holds what that sealed.
    const sealed = this.journal.seal() ?? this.journal.newestSealed();
    await this.cache.merge();
    if (sealed !== null) this.journal.release(sealed);
  }

  /** Merges RobotsRequested when asks arrived since the last such merge (their results ask robots.txt). */
  private async mergeAsks(): Promise<void> {
    const n = this.st.asks;
    if (n === this.asksMerged) return;
    this.asksMerged = n; // merge() ships every ask made so far, i.e. these n
    await this.requested.merge();
  }

  /** True while hosts wait in this stage (checks, asks, DNS answers) or a round runs. */
  get busy(): boolean {
    return this.pendingChecks > 0 || this.st.asks > this.asksMerged || this.dnsOutstanding > 0 || this.running !== null;
  }

  /**
   * Checkpoint: every answer received so far durable in the journal (fsync'ed: RobotsJournal
   * checkpoint), which the next open replays into RobotsCache. No merge: a merge reads and
   * rewrites all of RobotsCache, and a checkpoint that merged grew with the hosts crawled (267 →
   * 604 ms in 14 minutes over 10^7 hosts, bench/results/soak-probe-56052fb.json). Asks reach
   * RobotsRequested in the rounds; one not merged at a crash is asked again, like one in flight.
   */
  async commit(): Promise<void> {
    if (this.failure !== null) throw this.failure;
    await this.journal.checkpoint();
    if (this.stateDir !== null) await writeFileAtomic(path.join(this.stateDir, ROBOTS_TOTALS_FILE), sealedTotals(this.totals()));
  }

  /** Flushes both DRUMs (everything they accepted is durable), closes them and empties the journal. */
  async close(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    while (this.running !== null) await this.running;
    this.closed = true;
    await this.cache.close();
    this.journal.close(true);
    await this.requested.close();
    if (this.stateDir !== null) await writeFileAtomic(path.join(this.stateDir, ROBOTS_TOTALS_FILE), sealedTotals(this.totals()));
  }

  stats(): RobotsStageStats & { cache: ReturnType<RobotsCache['stats']>; requested: ReturnType<RobotsRequested['stats']> } {
    return { ...this.st, cache: this.cache.stats(), requested: this.requested.stats() };
  }
}

/**
 * RAM of the two DRUMs from the crawl's budget (docs/drum.md's model gives r from it, k = 1):
 * RobotsCache U/64 and RobotsRequested U/128 of the budget's shares (ram-budget.ts ramPlan, whose
 * `ofProcess` this passes on), each between 4 and 64 MiB.
 * One host key per tuple (not one per URL), so these are small beside URLseen's share.
 */
export function robotsDrumRam(ramBytes: number, ofProcess = true): { cache: number; requested: number } {
  const plan = ramPlan(ramBytes, 1, null, ofProcess);
  return { cache: plan.robotsCacheBytes, requested: plan.robotsRequestedBytes };
}

/** `<stateDir>/robots-key`: what the robots DRUMs and the answer journal are keyed by. */
export const ROBOTS_KEY_FILE = 'robots-key';
const ROBOTS_KEY = 'authority';

/**
 * Checks what the state's robots DRUMs are keyed by before they are opened. `authority` (the key
 * file) is what this code reads. Another word there is a format this code does not know:
 * CRAWL_CHECKPOINT_VERSION, nothing opened. No file: a new crawl, or a state written while the
 * robots DRUMs were keyed per host (before the file existed). Host-keyed answers cannot be
 * re-keyed (a key is a hash, and which scheme and port an answer came from was not recorded), and
 * applying one to every authority of its host is what the authority key corrects: the two DRUMs
 * and the journal are removed (they hold only robots answers and asks, no crawl work: each
 * authority's robots.txt is fetched once more), then the key file is written (atomically; a kill
 * before it repeats the removal).
 */
export async function checkRobotsKey(stateDir: string): Promise<void> {
  const file = path.join(stateDir, ROBOTS_KEY_FILE);
  let text: string | null = null;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (text !== null) {
    if (text.trim() === ROBOTS_KEY) return;
    throw new CrawlError('CRAWL_CHECKPOINT_VERSION', `${file}: the robots DRUMs are keyed by ${JSON.stringify(text.trim().slice(0, 64))}, which this drumcrawl does not read (it reads "${ROBOTS_KEY}")`);
  }
  await rm(path.join(stateDir, 'robotscache'), { recursive: true, force: true });
  await rm(path.join(stateDir, 'robotsrequested'), { recursive: true, force: true });
  for (const name of await readdir(stateDir)) {
    if (name === JOURNAL_FILE || name.startsWith(`${JOURNAL_FILE}.`)) await rm(path.join(stateDir, name), { force: true });
  }
  await writeFileAtomic(file, `${ROBOTS_KEY}\n`);
}

/**
 * Opens RobotsCache (`<stateDir>/robotscache`), RobotsRequested (`<stateDir>/robotsrequested`) and
 * the answer journal (`<stateDir>/robots-answers.jnl`), whose leftover answers are replayed into
 * RobotsCache and merged before this returns; all three keyed by the authority (checkRobotsKey).
 */
export async function openRobotsStage(
  stateDir: string, ramBytes: number, f: RobotsStageFrontier, dns: DnsCache, thread?: DrumThread, ofProcess = true,
): Promise<RobotsStage> {
  await checkRobotsKey(stateDir);
  const stage = new RobotsStage(f, dns);
  const ram = robotsDrumRam(ramBytes, ofProcess);
  const cache = await RobotsCache.open(path.join(stateDir, 'robotscache'), ram.cache, (hi, lo, e, aux) => stage.onCheck(hi, lo, e, aux), thread);
  const requested = await RobotsRequested.open(path.join(stateDir, 'robotsrequested'), ram.requested, (hi, lo, b, aux) => stage.onAsk(hi, lo, b, aux), thread);
  const { journal, recovered, upTo } = RobotsJournal.open(stateDir);
  stage.attach(cache, requested, journal, stateDir);
  await stage.replay(recovered, upTo);
  return stage;
}
