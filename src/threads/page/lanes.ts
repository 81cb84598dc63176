/**
 * The page pools as stages of a one-way pipeline (thesis Fig. 2: crawling threads → parser →
 * ContentSeen): a lane is a pool given, when the crawler is built, the stage its output goes to.
 * The stage that submits a page hands it over and never sees what the pool makes of it: the
 * parse's output (and a page worker's fetch report) go to the sinks, which are the next stages.
 *
 *   ParseLane  the parse pool (parse-pool.ts): a fetched body in, its parse outcome to `parsed`;
 *   PageLane   the page workers (page-worker-pool.ts): an order in, the fetch report to `fetched`
 *              as soon as the fetch ends, then the parse's note to `parsed`.
 *
 * A pool may serve several lanes (the partitions of a cluster node share one parse pool): each
 * crawl has its own lane over it. `submit` resolves once the sink has taken the page over, so the
 * task that started the page ends only when the page has left the pool's stages (the crawler's
 * `jobs` count, pipeline.ts idle); the promise carries nothing of the page.
 */
import type { ParsePool, ParseOutcome } from './parse-pool.js';
import type { ParseTask } from './parse-worker.js';
import type { PageWorkerPool } from './page-worker-pool.js';
import type { PageAnswer, PageOrder, ParseNote } from './page-worker-protocol.js';

export class ParseLane<J> {
  constructor(
    private readonly pool: ParsePool,
    private readonly parsed: (job: J, out: ParseOutcome) => Promise<void>,
  ) {}

  /** A fetched body to the parse pool; its outcome goes to the sink (ParsePool.run never rejects). */
  submit(job: J, task: ParseTask): Promise<void> {
    return this.pool.run(task).then((out) => this.parsed(job, out));
  }
}

export interface PageSinks<J> {
  /** a page's fetch report (synchronous: the frontier hears of the fetch at once) */
  fetched(job: J, a: PageAnswer): void;
  /** the parse's note; null: no parse follows (no HTTP response, or the pool was closed) */
  parsed(job: J, note: ParseNote | null): Promise<void>;
}

export class PageLane<J> {
  constructor(
    private readonly pool: PageWorkerPool,
    private readonly sinks: PageSinks<J>,
  ) {}

  /** An order to its IP's page worker; the report and the note go to the sinks (PageWorkerPool.run never rejects). */
  submit(job: J, order: PageOrder): Promise<void> {
    return this.pool.run(order, (a) => this.sinks.fetched(job, a)).then((note) => this.sinks.parsed(job, note));
  }
}
