/**
 * The page workers (page-worker.ts) seen from the main thread: `threads` worker threads, each with
 * its own HTTP connections, that fetch, parse and encode pages end to end. The main thread sends
 * dispatch orders and gets back, per page, the outcome and one buffer (link table + encoded WARC
 * group); the body itself never crosses.
 *
 * Routing: a page goes to the worker slotOf(ip) mod threads, so one IP's requests leave from one
 * thread, over one keep-alive pool (src/fetch keeps one connection per IP), behind one wire gate.
 *
 * Batching: the orders given in one synchronous run of the scheduler go to each worker as one
 * message (sent from a microtask at the end of that run). A worker answers in one message per turn
 * of its event loop: the fetch results of that turn (handled first: the frontier hears of them at
 * once, which frees the IP, as when the main thread fetched), then the parse results
 * (page-worker-serve.ts).
 *
 * Supervision, as the parse pool's (parse-pool.ts): a worker that dies (exit, out of memory under
 * resourceLimits) or hangs on a page past `timeoutMs` (it is terminated) is replaced at once, and
 * every page it held comes back with an outcome, none lost:
 *   - the page it was parsing: CRAWL_PARSE_CRASH, or CRAWL_PARSE_TIMEOUT for a hang (its body died
 *     with the worker: logged, not archived, not fetched again — it would take the worker down again);
 *   - every other page whose fetch result the worker had not posted (waiting for its floor, on the
 *     wire, or fetched in the turn the worker died): CRAWL_FETCH_ABORTED, which the frontier
 *     retries (error-policy.ts);
 *   - a page whose fetch result was posted (it went to the frontier) and not yet parsed: its body
 *     died with the worker, so it is fetched again by the replacement (the same order: the shared
 *     floors space it like any request) and parsed there; its second fetch result is not reported
 *     again. The failure stays with the page that caused it. A page fetched again MAX_REFETCHES
 *     times and never parsed (its workers kept dying) is CRAWL_PARSE_CRASH (logged, not archived).
 * A hang outside a parse (the fetch path runs no unbounded loop) is not watched.
 *
 * Bound: pages held by the workers ≤ the crawler's fetches in flight (fetchConcurrency); each
 * worker's V8 heap is capped via resourceLimits (`heapMb`), its bodies by the fetcher's limits.
 */
import { Worker } from 'node:worker_threads';
import { workerFile } from '../worker-file.js';
import { startWithInitialOldSpace } from '../../budget/heap-budget.js';
import { SharedFloors, slotOf } from './page-worker-floors.js';
import {
  PARSE_ABORTED, PARSE_CRASH, PARSE_TIMEOUT,
  type FromWorker, type PageAnswer, type PageOrder, type PageWorkerData, type ParseNote, type ToWorker,
} from './page-worker-protocol.js';

export interface PageWorkerPoolOptions {
  threads: number;
  /** a page's parse longer than this: the worker is terminated and replaced */
  timeoutMs: number;
  /** each worker's heap budget, MiB (resourceLimits) */
  heapMb?: number;
  /** the worker module's entry file; @default workerFile(import.meta.url, 'page-worker') */
  worker?: string;
  /**
   * The floors' table, made (for `threads` workers) before the pool: the main thread's robots.txt
   * requests sent before the workers start are in it (src/crawl/ports/early-robots.ts).
   */
  floors?: SharedFloors;
}

/**
 * Why a cluster node's partitions crawl without page workers: they share the node's fetcher,
 * parse pool and WARC writer (src/cluster/node.ts), and a page worker fetches on its own thread.
 */
export const PAGE_WORKERS_REFUSED = 'page workers (--page-workers on) are not available to the partitions of a cluster node, which share its fetcher, parse pool and WARC writer: a cluster node crawls with --page-workers off (its default there)';

/** fetched pages waiting for their parse per worker before dispatch pauses (see `saturated`) */
const UNPARSED_PER_WORKER = 16;
/** times an innocent page whose worker died is fetched again before it is given up (see the header) */
const MAX_REFETCHES = 3;
/**
 * Young generation per page worker (MiB): 8, a parse worker's (parse-pool.ts), at most a quarter of
 * its heap budget. The fetch path fills it several times faster than a parse does, and a quarter of
 * the budget (up to 32 MiB) scavenged less often: 0.03 ms per page less on the runtime threads
 * (three alternated pairs of bench:e2e --page-workers on at the default --ram, 8 against 32:
 * bench/results/e2e-ab-cca20be-5f7e54d-pageworkers-2.json). But each worker then commits two large
 * semi-spaces and holds the ArrayBuffers of its dead socket reads and bodies until a scavenge frees
 * them: with 32 MiB and a 48 MiB first old-generation limit, page workers peaked at 515–545 MB of
 * RSS at --ram 1G where the parse pool's crawl peaked at 460–477 MB, 10,000 pages each; with 8 and
 * 16 (pageWorkerInitialOldMb) at 433–483, median 458 against the parse pool's 469 (bench:e2e
 * --max-pages 10000, alternated in one sitting: bench/results/e2e-abc-471c0b9-pw-ram1g-bench-10k.json;
 * hosts2000: e2e-abc-471c0b9-pw-ram1g-hosts2000-10k.json; docs/performance.md "Page workers'
 * memory at the same crawl state"). The price is GC time on the workers (the same section).
 */
export function pageWorkerYoungMb(heapMb: number): number {
  // (DRUMCRAWL_PAGE_YOUNG_MB: experiment knob like DRUMCRAWL_PARSE_YOUNG_MB)
  const knob = Number(process.env.DRUMCRAWL_PAGE_YOUNG_MB);
  if (knob > 0) return Math.max(1, Math.min(knob, Math.floor(heapMb / 2)));
  return Math.max(1, Math.min(8, Math.floor(heapMb / 4)));
}

/**
 * First old-generation limit per page worker (MiB): 16, at most half its old-space cap. A larger
 * first limit lets the old generation fill with garbage before its first full collection: from
 * 64 MiB a worker ran none in a 20 s bench:e2e run, where V8's own start (the limit a young
 * generation above the ~21 MiB live heap) ran one every half second, and the runtime threads
 * (concurrent marking) spent 0.201 against 0.139 ms per page
 * (bench/results/e2e-ab-4b9659e-13b0c59-pw-both.json). That garbage is resident: with the young
 * generation above it, the page workers' heaps held 110–115 MiB against the parse pool's 50–56, and
 * the process's peak RSS passed the parse pool's (pageWorkerYoungMb). V8 sets it with
 * --initial-old-space-size (startWithInitialOldSpace).
 */
export function pageWorkerInitialOldMb(heapMb: number): number {
  // (DRUMCRAWL_PAGE_INITIAL_OLD_MB: experiment knob)
  const knob = Number(process.env.DRUMCRAWL_PAGE_INITIAL_OLD_MB);
  if (knob > 0) return Math.min(knob, Math.floor(pageWorkerOldMb(heapMb) / 2));
  return Math.min(16, Math.floor(pageWorkerOldMb(heapMb) / 2));
}

/** Old-space cap per page worker (MiB): its heap budget less the young generation, at least 16. */
function pageWorkerOldMb(heapMb: number): number {
  return Math.max(16, heapMb - pageWorkerYoungMb(heapMb));
}

interface Held {
  order: PageOrder;
  onFetched: (a: PageAnswer) => void;
  resolve: (x: ParseNote | null) => void;
  /** its PageAnswer was delivered */
  fetched: boolean;
  /** fetched again after its worker died (the next PageAnswer is not delivered) */
  refetches: number;
}

interface Slot {
  index: number;
  worker: Worker;
  held: Map<number, Held>;
  outbox: PageOrder[];
  parseStart: Float64Array;
  parseId: Int32Array;
  state: SharedArrayBuffer;
  /** the id of the page this worker was terminated for (a hang) */
  timedOut: number;
  ready: Promise<void>;
  /** the worker's isolate exists (or it is gone) */
  online: Promise<void>;
  gone: boolean;
}

export class PageWorkerPool {
  private readonly slots: Slot[] = [];
  private readonly sendQueued = new Set<Slot>();
  private sendScheduled = false;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;
  private held = 0;
  /** pages fetched and not yet parsed (their bodies wait in the workers) */
  private unparsed = 0;
  private onStart: ((order: PageOrder, at: number, ip: string) => void) | null = null;
  /** workers that died or were terminated for a hang, and replaced */
  replaced = 0;
  /**
   * The floors' stamps and the connections per IP, shared with the workers (the main thread's
   * FloorGuard and robots.txt Fetcher use them too: thread index 0).
   */
  readonly floors: SharedFloors;
  private readonly data: Omit<PageWorkerData, 'state' | 'index'>;

  constructor(
    data: Omit<PageWorkerData, 'state' | 'floors' | 'workers' | 'index'>,
    private readonly opts: PageWorkerPoolOptions,
  ) {
    const n = Math.max(1, opts.threads);
    this.floors = opts.floors ?? new SharedFloors(n);
    this.data = { ...data, floors: this.floors.buffer, workers: n };
    for (let i = 0; i < n; i++) this.slots.push(this.spawn(i));
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, opts.timeoutMs / 8));
    this.sweeper.unref();
  }

  get threads(): number {
    return this.slots.length;
  }

  /** pages handed to the workers and not yet answered */
  get pending(): number {
    return this.held;
  }

  /**
   * Back-pressure for the scheduler (as the parse pool's `saturated`): the workers hold
   * UNPARSED_PER_WORKER fetched pages each waiting for their parse — more fetches would only hold
   * more bodies. Bound on bodies held in the workers: this many plus the fetches in flight.
   */
  get saturated(): boolean {
    return this.unparsed >= UNPARSED_PER_WORKER * this.slots.length;
  }

  /**
   * Resolves once every worker's isolate exists: until then V8's --initial-old-space-size is set
   * for them (startWithInitialOldSpace), so no other worker thread should start before.
   */
  async online(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.online));
  }

  /** Resolves once every worker has loaded its code (a cold start is not a page's time). */
  async warmup(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.ready));
  }

  /**
   * Fetch + parse + encode one page on its IP's worker: `onFetched` gets the fetch result as soon as
   * the fetch ends (for the frontier), the promise the parse's result (null: none follows — no HTTP
   * response). Never rejects.
   */
  run(order: PageOrder, onFetched: (a: PageAnswer) => void): Promise<ParseNote | null> {
    if (this.closed) {
      onFetched(this.aborted(order));
      return Promise.resolve(null);
    }
    const s = this.slots[slotOf(order.ip) % this.slots.length]!;
    this.held++;
    return new Promise<ParseNote | null>((resolve) => {
      s.held.set(order.id, { order, onFetched, resolve, fetched: false, refetches: 0 });
      s.outbox.push(order);
      this.sendQueued.add(s);
      if (!this.sendScheduled) {
        this.sendScheduled = true;
        queueMicrotask(() => this.send());
      }
    });
  }

  /** Abort every page in the workers (a stop past its grace period, stop.ts): they answer ABORTED. */
  abortInFlight(): void {
    this.broadcast({ t: 'abort' });
  }

  /**
   * A stop past its grace period gives up the pages fetched and not yet parsed (stop.ts): each is
   * answered PARSE_ABORTED now, without waiting for its worker (which may be in a long parse); the
   * workers drop theirs and answer later fetches the same way.
   */
  abandonUnparsed(): number {
    let n = 0;
    for (const s of this.slots) {
      for (const [id, h] of s.held) {
        if (!h.fetched) continue;
        s.held.delete(id);
        this.held--;
        this.unparsed--;
        h.resolve({ id, parse: PARSE_ABORTED, message: 'the crawl stopped before this page was parsed' });
        n++;
      }
    }
    this.broadcast({ t: 'abandon' });
    return n;
  }

  /** The wire gates' floors (a live POST /config). */
  setIntervals(minIpIntervalMs: number, minHostIntervalMs: number): void {
    this.data.fetcher = { ...this.data.fetcher, minIpIntervalMs, minHostIntervalMs };
    this.broadcast({ t: 'intervals', minIpIntervalMs, minHostIntervalMs });
  }

  /**
   * Report each send as it happens (`onStart`, the page's order and its actual start on the shared
   * clock), one message per page: for the crawler's 'dispatch' event and TRACE lines, which must come
   * in time order (a page's answer comes back long after a robots.txt request to the same IP may
   * have started on the main thread). Off by default (it costs a message per page).
   */
  reportStarts(onStart: (order: PageOrder, at: number, ip: string) => void): void {
    if (this.onStart !== null) return;
    this.onStart = onStart;
    this.data.reportStarts = true;
    this.broadcast({ t: 'report-starts' });
  }

  get reportingStarts(): boolean {
    return this.onStart !== null;
  }

  /** Never connect to the crawler's own status server (Fetcher.refuseEndpoint). */
  refuseEndpoint(host: string, port: number): void {
    this.data.refused = [...this.data.refused, [host, port]];
    this.broadcast({ t: 'refuse', host, port });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    await Promise.all(this.slots.map(async (s) => {
      s.gone = true;
      const exited = new Promise<void>((r) => s.worker.once('exit', () => r()));
      s.worker.postMessage({ t: 'close' } satisfies ToWorker);
      const t = setTimeout(() => void s.worker.terminate(), 5000);
      await exited;
      clearTimeout(t);
      this.release(s, () => 0);
    }));
  }

  private broadcast(m: ToWorker): void {
    for (const s of this.slots) if (!s.gone) s.worker.postMessage(m);
  }

  private send(): void {
    this.sendScheduled = false;
    for (const s of this.sendQueued) {
      if (s.outbox.length === 0 || s.gone) continue;
      s.worker.postMessage({ t: 'orders', orders: s.outbox } satisfies ToWorker);
      s.outbox = [];
    }
    this.sendQueued.clear();
  }

  private spawn(index: number): Slot {
    const state = new SharedArrayBuffer(16);
    const heapMb = this.opts.heapMb;
    const start = (): Worker => new Worker(this.opts.worker ?? workerFile(import.meta.url, 'page-worker'), {
      workerData: { ...this.data, state, index: index + 1 } satisfies PageWorkerData,
      resourceLimits: heapMb ? { maxOldGenerationSizeMb: pageWorkerOldMb(heapMb), maxYoungGenerationSizeMb: pageWorkerYoungMb(heapMb) } : undefined,
    });
    const worker = heapMb ? startWithInitialOldSpace(pageWorkerInitialOldMb(heapMb), start) : start();
    let ready!: () => void;
    const s: Slot = {
      index, worker, held: new Map(), outbox: [], state, timedOut: 0, gone: false,
      parseStart: new Float64Array(state, 0, 1), parseId: new Int32Array(state, 8, 1),
      ready: new Promise<void>((r) => { ready = r; }),
      online: new Promise<void>((r) => { worker.once('online', r); worker.once('exit', () => r()); }),
    };
    worker.on('message', (m: FromWorker) => {
      if (m.t === 'ready') return ready();
      if (m.t === 'started') {
        const h = s.held.get(m.id);
        if (h !== undefined) this.onStart?.(h.order, m.at, m.ip);
        return;
      }
      for (const a of m.fetched) {
        const h = s.held.get(a.id);
        if (h === undefined) continue;
        if (h.refetches > 0) {
          // fetched again after its worker died: reported to the frontier once already
          if (!a.parses) {
            s.held.delete(a.id);
            this.held--;
            this.unparsed--;
            h.resolve({ id: a.id, parse: PARSE_CRASH, message: `page worker died before parsing this page; fetched again: ${a.outcome}` });
          }
          continue;
        }
        h.fetched = true;
        if (a.parses) this.unparsed++;
        else {
          s.held.delete(a.id);
          this.held--;
        }
        h.onFetched(a);
        if (!a.parses) h.resolve(null);
      }
      for (const x of m.parsed) {
        const h = s.held.get(x.id);
        if (h === undefined) continue;
        s.held.delete(x.id);
        this.held--;
        this.unparsed--;
        h.resolve(x);
      }
    });
    // An error is followed by 'exit'; without a listener it would crash the process.
    worker.on('error', () => undefined);
    worker.once('exit', (code: number) => {
      ready();
      if (s.gone) return;
      s.gone = true;
      // Blame the page being parsed; every other page comes back to be fetched again.
      const blamed = Atomics.load(s.parseId, 0);
      // Its exchanges died with it: their connection slots are free again.
      this.floors.releaseThread(index + 1);
      // A hang is the page the sweep terminated the worker for (terminate() exits with 1); a worker
      // that exited by itself meanwhile (its exit can take a second on a loaded box) crashed.
      const hung = s.timedOut !== 0 && code === 1 ? s.timedOut : 0;
      const again = this.release(s, (id) => (id === hung ? PARSE_TIMEOUT : id === blamed && blamed !== 0 ? PARSE_CRASH : 0));
      if (!this.closed) {
        this.replaced++;
        const next = this.spawn(index);
        this.slots[index] = next;
        // The innocent pages fetched and not parsed: fetched again there (see the header).
        for (const h of again) {
          next.held.set(h.order.id, h);
          next.outbox.push(h.order);
        }
        if (again.length > 0) {
          this.sendQueued.add(next);
          if (!this.sendScheduled) {
            this.sendScheduled = true;
            queueMicrotask(() => this.send());
          }
        }
      }
    });
    return s;
  }

  /**
   * Answer every page a worker that is gone still held: `verdict` names the page it is blamed for
   * (PARSE_TIMEOUT / PARSE_CRASH; 0: not blamed). A page not yet fetched comes back ABORTED (the
   * frontier retries it); one fetched and not yet parsed lost its body with the worker (CRASH).
   */
  private release(s: Slot, verdict: (id: number) => number): Held[] {
    const again: Held[] = [];
    for (const [id, h] of s.held) {
      const v = verdict(id);
      if (!h.fetched && v === 0) {
        this.held--;
        h.onFetched(this.aborted(h.order));
        h.resolve(null);
        continue;
      }
      if (h.fetched && v === 0 && !this.closed && h.refetches < MAX_REFETCHES) {
        // innocent, its body gone with the worker: fetched again by the replacement (still held)
        h.refetches++;
        again.push(h);
        continue;
      }
      this.held--;
      if (!h.fetched) {
        // Blamed while its parse ran, before its fetch result was posted (they go out together):
        // it was fetched (an HTTP response, its details died with the worker).
        h.fetched = true;
        this.unparsed++;
        h.onFetched({ ...this.aborted(h.order), outcome: 'ok', parses: true });
      }
      this.unparsed--;
      h.resolve({
        id, parse: v === PARSE_TIMEOUT ? PARSE_TIMEOUT : PARSE_CRASH,
        message: v === PARSE_TIMEOUT ? `parser did not finish in ${this.opts.timeoutMs} ms; worker replaced`
          : v === PARSE_CRASH ? 'page worker died while parsing this page'
            : `page worker died before parsing this page (fetched again ${h.refetches} times)`,
      });
    }
    s.held.clear();
    s.outbox = [];
    return again;
  }

  private aborted(o: PageOrder): PageAnswer {
    return { id: o.id, at: 0, ip: o.ip, outcome: 'CRAWL_FETCH_ABORTED', truncated: false, totalMs: 0, payloadBytes: 0, parses: false };
  }

  /** Terminate a worker whose current parse is past its deadline (its 'exit' then replaces it). */
  private sweep(): void {
    const now = Date.now();
    for (const s of this.slots) {
      if (s.gone || s.timedOut !== 0) continue;
      const id = Atomics.load(s.parseId, 0);
      if (id !== 0 && now - s.parseStart[0]! > this.opts.timeoutMs) {
        s.timedOut = id;
        void s.worker.terminate();
      }
    }
  }
}
