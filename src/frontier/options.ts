/**
 * The frontier's options: the politeness presets (thesis VII.1: τh, τs, B0 and the RAM bound),
 * the frontier's own knobs (storage, refill pacing, QR rescans), and their resolution into one
 * validated PolitenessOptions (preset values overridden by the caller's).
 *
 * Invariant: Frontier.open only ever runs with options that passed validate(); a bad value or an
 * unknown preset raises CRAWL_FRONTIER_OPTIONS.
 */
import type { BeastOptions } from './beast/index.js';
import type { DiskStoreOptions } from './beast/index.js';
import type { DropReason, IpGate, PolitenessOptions } from './politeness/index.js';
import type { FrontierUrl } from './record.js';
import { CrawlError } from '../errors.js';

export type Clock = () => number;

export type FrontierPreset = 'default' | 'irlbot';

/** All knobs; times in ms. Defaults come from the preset (see FRONTIER_PRESETS, docs/frontier.md). */
export interface FrontierOptions extends Partial<PolitenessOptions> {
  preset?: FrontierPreset;
  /** BEAST: initialQueues (j), maxQueues (cap on j), maxPassPlds, rebudget hook. */
  beast?: BeastOptions;
  /** 'disk' (default when a directory is given) or 'memory' (simulations; nothing persists). */
  storage?: 'disk' | 'memory';
  /** DiskQueue settings of the frontier's queues. */
  disk?: DiskStoreOptions;
  /** Called for every URL the frontier gives up on, with a stable reason code. */
  onDrop?: (u: FrontierUrl, reason: DropReason) => void;
  /** A gate on IPs other crawls contact too (politeness.ts IpGate; src/cluster). @default none */
  ipGate?: IpGate;
  /** Records read from BEAST / QR per refill step. @default 4096 */
  refillBatch?: number;
  /** BEAST is not read while QR holds more than this many URLs. @default 4 × ramUrls */
  maxQr?: number;
  /** QR is re-read after this many robots answers (or when none is outstanding). @default 256 */
  qrRescanAnswers?: number;
  /** With BEAST empty and no robots answer awaited, QR is re-read at most this often. @default max(1 s, τh0) */
  qrIdleRescanMs?: number;
  /**
   * Refill pacing (thesis VII.2: the current BEAST queue is read as fast as it is crawled): the
   * current queue is read freely (RAM permitting), but BEAST moves on to the next queue only
   * once what RAM (+ QR) can dispatch within this horizon has fallen below half the recent page
   * release rate × horizon. 0 = no pacing (fill RAM up to ramUrls). @default 5000
   */
  refillHorizonMs?: number;
  /** Lower bound of that low-water mark (URLs), e.g. at the start when no rate is known yet. @default 256 */
  minReadyUrls?: number;
  /**
   * Breadth term of the refill pacing: BEAST also moves on while fewer than this many IPs have
   * URLs in RAM (hosts awaiting their robots/DNS answer count as one IP each), capped at
   * `busyIpShare` of the IPs known. With one connection per IP (the fetcher's default) at most
   * that many fetches can be in flight, and at delays 0 the rate-based low-water mark alone has a
   * fixed point at low breadth (docs/frontier.md, Refill pacing). Set it to the fetch concurrency
   * ÷ connections per IP. 0 = no breadth term. @default 64
   */
  minBusyIps?: number;
  /** Cap of the breadth target as a share of the IPs known. @default 0.5 */
  busyIpShare?: number;
  /**
   * Awaited between batches of the frontier's disk work — refill reads, QR rescans, BEAST
   * re-spreads and compactions — so that a caller that does not wait for refill() keeps
   * dispatching meanwhile (the crawler: src/crawl/ports/frontier-port.ts). @default none (each call runs
   * its batches back to back)
   */
  pause?: () => Promise<void>;
}

export const FRONTIER_PRESETS: Record<FrontierPreset, PolitenessOptions> = {
  /** A polite general-purpose crawl. */
  default: {
    hostDelayMs: 10_000,
    minHostDelayMs: 1_000,
    ipDelayMs: 1_000,
    minIpDelayMs: 100,
    b0: 10,
    ramUrls: 200_000,
    maxUrlsPerHost: 1_000,
    maxHosts: 600_000,
    maxConnectionsPerIp: 2,
    maxCrawlDelayMs: 120_000,
    maxBackoffMs: 3_600_000,
    maxHostErrors: 8,
    maxAttempts: 3,
    failedHostTtlMs: 3_600_000,
    trustThreshold: 0,
  },
  /**
   * IRLbot's whole-web values: τh = 40 s for low-ranked PLDs, τs = 1 s, B0 = 10 (thesis VII.1), and
   * the floors of its crawl, τh0 = 10 s and τs0 = 1/20 s (VIII.2). RAM sized for a 16 GB box.
   */
  irlbot: {
    hostDelayMs: 40_000,
    minHostDelayMs: 10_000,
    ipDelayMs: 1_000,
    minIpDelayMs: 50,
    b0: 10,
    ramUrls: 4_000_000,
    maxUrlsPerHost: 10_000,
    maxHosts: 10_000_000,
    maxConnectionsPerIp: 1,
    maxCrawlDelayMs: 120_000,
    maxBackoffMs: 3_600_000,
    maxHostErrors: 8,
    maxAttempts: 3,
    failedHostTtlMs: 6 * 3_600_000,
    trustThreshold: 0,
  },
};

/** Throws CRAWL_FRONTIER_OPTIONS unless every politeness value is in range. */
export function validate(o: PolitenessOptions): void {
  const pos = (k: keyof PolitenessOptions, int = false): void => {
    const v = o[k];
    if (typeof v !== 'number' || !(v >= 0) || (int && !Number.isInteger(v))) {
      throw new CrawlError('CRAWL_FRONTIER_OPTIONS', `options.${k} must be a non-negative ${int ? 'integer' : 'number'}`);
    }
  };
  for (const k of ['hostDelayMs', 'minHostDelayMs', 'ipDelayMs', 'minIpDelayMs', 'b0', 'maxCrawlDelayMs', 'maxBackoffMs', 'failedHostTtlMs'] as const) pos(k);
  for (const k of ['ramUrls', 'maxUrlsPerHost', 'maxHosts', 'maxConnectionsPerIp', 'maxHostErrors', 'maxAttempts'] as const) pos(k, true);
  if (o.trustThreshold !== undefined) pos('trustThreshold', true);
  if (o.crawlDelayMarginMs !== undefined) pos('crawlDelayMarginMs');
  if (o.maxUrlBytes !== undefined) pos('maxUrlBytes');
  if (o.maxHostBytes !== undefined) pos('maxHostBytes');
  if (o.ramUrls < 1) throw new CrawlError('CRAWL_FRONTIER_OPTIONS', 'options.ramUrls must be ≥ 1');
  if (o.maxConnectionsPerIp < 1) throw new CrawlError('CRAWL_FRONTIER_OPTIONS', 'options.maxConnectionsPerIp must be ≥ 1');
  if (o.maxHosts < 16) throw new CrawlError('CRAWL_FRONTIER_OPTIONS', 'options.maxHosts must be ≥ 16');
}

/** The preset named by `options.preset` (default 'default'), overridden by `options`, validated. */
export function resolveFrontierOptions(options: FrontierOptions): PolitenessOptions {
  const base = Object.hasOwn(FRONTIER_PRESETS, options.preset ?? 'default') ? FRONTIER_PRESETS[options.preset ?? 'default'] : undefined;
  if (base === undefined) {
    throw new CrawlError('CRAWL_FRONTIER_OPTIONS', `options.preset must be one of ${Object.keys(FRONTIER_PRESETS).join(', ')} (got ${String(options.preset)})`);
  }
  const o: PolitenessOptions = { ...base };
  for (const k of [...Object.keys(base), 'crawlDelayMarginMs'] as (keyof PolitenessOptions)[]) {
    const v = options[k];
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  }
  // The byte bounds are in no preset (unbounded unless given).
  if (options.maxUrlBytes !== undefined) o.maxUrlBytes = options.maxUrlBytes;
  if (options.maxHostBytes !== undefined) o.maxHostBytes = options.maxHostBytes;
  if (options.maxHosts === undefined) o.maxHosts = Math.max(o.maxHosts, 3 * o.ramUrls);
  validate(o);
  return o;
}

