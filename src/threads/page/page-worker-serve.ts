/**
 * Page worker (a thread of page-worker-pool.ts; its entry is page-worker.ts): fetches a page, parses it and encodes its WARC
 * records, end to end, so that the page's body never reaches the main thread (issue: the main
 * thread keeps only what must be serial — frontier decisions, DRUM orchestration, checkpoints).
 *
 *   order (URL, IP, reserved start) ─► wait for the floors ─► Fetcher (this thread's undici pools,
 *   network guard, limits) ─► parse + WARC group (parse-worker.ts, same code as the parse pool)
 *   ─► answer (outcome, timings, one transferred buffer: link table + encoded WARC group)
 *
 * Politeness on the wire: the main thread reserves each page's earliest start (FloorGuard.reserve)
 * and this worker sends no sooner than that, nor sooner than the floors after the actual starts in
 * the shared table (page-worker-floors.ts) — checked again right before the send, in the same
 * synchronous run, so a late timer (this thread was parsing) never shortens a gap. The actual start
 * is stamped there and reported with the answer (the crawler's 'dispatch' event and TRACE line).
 * This worker's Fetcher keeps its own wire gate per IP as well (src/fetch, fetcher.ts).
 *
 * Answers are sent in batches: every answer finished in one turn of this thread's event loop goes
 * in one message (their buffers transferred, not copied).
 *
 * Supervision (page-worker-pool.ts): while a page is parsed, its id and start time are in this
 * worker's shared state, so the pool knows which page to blame when the worker dies or hangs.
 */
import type { MessagePort } from 'node:worker_threads';
import { Fetcher, isHttpResponse, type FetchResult } from '../../fetch/index.js';
import { parse, type ParseTask } from './parse-worker.js';
import { SharedFloors, clock } from './page-worker-floors.js';
import { isCss } from '../../config/requisites.js';
import { MemoryBudget } from '../../fetch/memory-budget.js';
import {
  PARSE_ABORTED, PARSE_ERROR, PARSE_LIMIT, PARSE_OK, isHtml, truncation,
  type FromWorker, type PageAnswer, type PageOrder, type PageWorkerData, type ParseNote, type ToWorker,
} from './page-worker-protocol.js';

const ABORTED = 'CRAWL_FETCH_ABORTED';

/** Longest stretch of parsing between two looks at this thread's sockets (ms). */
const PARSE_SLICE_MS = 4;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.ceil(ms)));

/**
 * The worker's loop, on `port` (parentPort in a worker thread). `parseTask`: the parser (tests put
 * a faulty one here; the crawler runs parse-worker.ts's).
 */
export function serve(port: MessagePort, data: PageWorkerData, parseTask: (t: ParseTask) => Uint8Array = parse): void {
  const w = new PageWorker(port, data, parseTask);
  port.on('message', (m: ToWorker) => w.onMessage(m));
  port.postMessage({ t: 'ready' } satisfies FromWorker);
}

/** One page worker's state: its Fetcher, the shared floors, the pages between fetch and answer. */
class PageWorker {
  private readonly floors: SharedFloors;
  private readonly fetcher: Fetcher;
  private readonly parseStart: Float64Array;
  private readonly parseId: Int32Array;
  private aborting = false;
  /** a stop gave up the pages not yet parsed: fetched pages are answered PARSE_ABORTED unparsed */
  private abandoning = false;
  /** post each send at once (the crawler's 'dispatch' event and TRACE lines, in time order) */
  private reportStarts: boolean;
  /** fetch results not yet posted, pages fetched and not yet parsed, parse results not yet posted */
  private fetchedOut: PageAnswer[] = [];
  private readonly toParse: { o: PageOrder; r: FetchResult; at: number; a: PageAnswer }[] = [];
  private parsedOut: ParseNote[] = [];
  private scheduled = false;

  constructor(
    private readonly port: MessagePort,
    data: PageWorkerData,
    private readonly parseTask: (t: ParseTask) => Uint8Array,
  ) {
    this.floors = new SharedFloors(data.workers, data.floors);
    // This thread's wire gate also sees the other threads' writes and connections (wire-share.ts).
    // ... and its bodies count in the crawl's one body budget.
    this.fetcher = new Fetcher({ ...data.fetcher, share: this.floors.forThread(data.index), budget: data.budget !== undefined ? MemoryBudget.attach(data.budget) : undefined });
    for (const [h, p] of data.refused) this.fetcher.refuseEndpoint(h, p);
    this.parseStart = new Float64Array(data.state, 0, 1);
    this.parseId = new Int32Array(data.state, 8, 1);
    this.reportStarts = data.reportStarts === true;
  }

  onMessage(m: ToWorker): void {
    switch (m.t) {
      case 'orders':
        for (const o of m.orders) {
          this.run(o).catch((e: unknown) => {
            // Not expected (the fetcher never rejects, the parse is caught): the page still answers.
            this.answer({ id: o.id, at: 0, ip: o.ip, outcome: 'CRAWL_FETCH_ERROR', errorCode: (e as Error)?.message, truncated: false, totalMs: 0, payloadBytes: 0, parses: false });
          });
        }
        break;
      case 'abort':
        this.aborting = true;
        this.fetcher.abortInFlight();
        break;
      case 'abandon':
        // (the pool answered these pages already; these notes only confirm it)
        this.abandoning = true;
        for (const p of this.toParse.splice(0)) {
          this.fetcher.release(p.r);
          this.parsedOut.push({ id: p.o.id, parse: PARSE_ABORTED });
        }
        this.schedule();
        break;
      case 'intervals':
        this.fetcher.setIntervals({ minIpIntervalMs: m.minIpIntervalMs, minHostIntervalMs: m.minHostIntervalMs });
        break;
      case 'refuse':
        this.fetcher.refuseEndpoint(m.host, m.port);
        break;
      case 'report-starts':
        this.reportStarts = true;
        break;
      case 'close':
        void this.fetcher.close().finally(() => this.port.close());
        break;
    }
  }

  /**
   * One turn of the worker's page work: parses for at most PARSE_SLICE_MS (so this thread's sockets
   * are read between slices), then one message with the turn's fetch results (the main thread
   * reports them to the frontier first, which frees each IP for its next request, as when the main
   * thread fetched) and its parse results. More pages waiting: another turn, after the event loop's
   * I/O.
   */
  private turn(): void {
    this.scheduled = false;
    const fetched = this.fetchedOut;
    this.fetchedOut = [];
    const until = performance.now() + PARSE_SLICE_MS;
    let n = 0;
    while (n < this.toParse.length && (n === 0 || performance.now() < until)) {
      const p = this.toParse[n++]!;
      this.parsedOut.push(this.parsePage(p.o, p.r, p.at, p.a));
    }
    this.toParse.splice(0, n);
    // One message per turn: the fetch results of this turn, then the parse results.
    const parsed = this.parsedOut;
    this.parsedOut = [];
    const transfer: ArrayBuffer[] = [];
    for (const x of parsed) {
      if (x.out !== undefined) transfer.push(x.out.buffer as ArrayBuffer);
      if (x.table !== undefined) transfer.push(x.table.buffer as ArrayBuffer);
      if (x.decoded !== undefined) transfer.push(x.decoded.buffer as ArrayBuffer);
      if (x.heads !== undefined) transfer.push(x.heads.buffer as ArrayBuffer);
    }
    if (fetched.length > 0 || parsed.length > 0) this.port.postMessage({ t: 'pages', fetched, parsed } satisfies FromWorker, transfer);
    if (this.toParse.length > 0) this.schedule();
  }

  private schedule(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.turn());
    }
  }

  private answer(a: PageAnswer): void {
    this.fetchedOut.push(a);
    this.schedule();
  }

  /** Parse one fetched page (in place of the parse pool), marked in the shared state meanwhile. */
  private parsePage(o: PageOrder, r: FetchResult, at: number, a: PageAnswer): ParseNote {
    const ok2xx = r.outcome === 'ok';
    const html = ok2xx && isHtml(r.contentType) && !o.sitemap;
    const task: ParseTask = {
      url: o.url, body: r.body, decoded: r.decoded, charset: r.charset, html, follow: html && o.follow,
      requisites: o.requisites, css: ok2xx && isCss(r.contentType) && !o.sitemap,
      exchange: { ip: a.ip, dateMs: Math.floor(at), requestHead: r.requestHead, responseHead: r.responseHead!, truncated: truncation(r) },
    };
    const x: ParseNote = { id: o.id, parse: PARSE_OK };
    this.parseStart[0] = Date.now();
    Atomics.store(this.parseId, 0, o.id);
    try {
      x.out = this.parseTask(task);
    } catch (e) {
      // Archived all the same, as a payload without links (the parse pool's rule for a parser error).
      x.parse = (e as { code?: unknown })?.code === 'CRAWL_PARSE_LIMIT' ? PARSE_LIMIT : PARSE_ERROR;
      x.message = (e as Error)?.message ?? String(e);
      x.out = this.parseTask({ ...task, html: false, follow: false });
    } finally {
      Atomics.store(this.parseId, 0, 0);
    }
    // The link table apart (a few KB): `out` then goes whole to the WARC writer's thread, taken
    // there by transfer where the main thread would copy the group (ParseNote.table).
    const out = x.out;
    if (out !== undefined) x.table = out.slice(4, 4 + new DataView(out.buffer, out.byteOffset, 4).getUint32(0, true));
    // A sitemap's entries are read on the main thread (they enter URLseen like links).
    if (ok2xx && o.sitemap) x.decoded = r.decoded.slice();
    // The encoded group holds the body now: its bytes go back to the budget.
    this.fetcher.release(r);
    const rq = r.requestHead;
    const rs = r.responseHead!;
    const heads = new Uint8Array(rq.byteLength + rs.byteLength);
    heads.set(rq, 0);
    heads.set(rs, rq.byteLength);
    x.heads = heads;
    x.requestHeadBytes = rq.byteLength;
    return x;
  }

  /** One order: wait for the floors, send, and queue the page for its parse. */
  private async run(o: PageOrder): Promise<void> {
    const a: PageAnswer = { id: o.id, at: 0, ip: o.ip, outcome: ABORTED, truncated: false, totalMs: 0, payloadBytes: 0, parses: false };
    const floors = this.floors;
    // The reserved start, then the actual starts of the previous requests (any thread's).
    if (o.notBefore > clock()) await sleep(o.notBefore - clock());
    for (let due = floors.due(o.host, o.ip, o.hostGapMs, o.ipGapMs); due > clock(); due = floors.due(o.host, o.ip, o.hostGapMs, o.ipGapMs)) await sleep(due - clock());
    if (this.aborting) return this.answer(a);
    // Stamped in the same synchronous run as the fetcher's send (its wire gate writes at once when
    // the IP's connection is free).
    const at = clock();
    floors.started(o.host, o.ip, at);
    a.at = at;
    if (this.reportStarts) this.port.postMessage({ t: 'started', id: o.id, at, ip: o.ip } satisfies FromWorker);
    const r = await this.fetcher.fetch({ url: o.url, ip: o.ip, hostGapMs: o.hostGapMs, ipGapMs: o.ipGapMs });
    a.outcome = r.outcome;
    if (r.wireAt !== undefined) a.wireAt = r.wireAt;
    if (r.ip !== '') a.ip = r.ip;
    if (r.errorCode !== undefined) a.errorCode = r.errorCode;
    if (r.status !== undefined) a.status = r.status;
    if (r.contentType !== undefined) a.contentType = r.contentType;
    if (r.location !== undefined) a.location = r.location;
    if (r.retryAfterMs !== undefined) a.retryAfterMs = r.retryAfterMs;
    a.truncated = r.truncated;
    if (r.truncatedReason !== undefined) a.truncatedReason = r.truncatedReason;
    a.totalMs = r.timings.totalMs;
    a.payloadBytes = r.body.byteLength;
    a.parses = !(this.aborting && r.outcome === ABORTED) && isHttpResponse(r);
    if (!a.parses) this.fetcher.release(r);
    else if (this.abandoning) {
      this.fetcher.release(r);
      this.parsedOut.push({ id: o.id, parse: PARSE_ABORTED });
    } else this.toParse.push({ o, r, at, a });
    this.answer(a);
  }
}
