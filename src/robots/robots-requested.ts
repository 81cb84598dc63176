/**
 * RobotsRequested (thesis VII.1, Fig. 2): a DRUM keyed by the 64-bit hash of an authority
 * (scheme://host[:port], src/util/authority.ts), one check+update per authority whose robots answer
 * RobotsCache did not have (or had expired); "host" below is that authority. The value is the time of
 * the ask (f64 LE, ms since the epoch; overwritten by each later ask), so its result says whether
 * and when the host was asked before. It runs in a DRUM worker thread and commits like URLseen
 * (drum-proxy.ts, docs/drum.md "Crash safety").
 *
 * What a duplicate means here: the frontier's host table hands each host out at most once while
 * its answer is pending, and every robots.txt answer reaches RobotsCache before its host can leave
 * RAM, so a host whose robots.txt was fetched is answered from RobotsCache from then on. A host
 * asked before but missing from RobotsCache is one whose answer never got there: the ask was not
 * answered by a fetch (DNS failure, blocked address, a graceful stop before the fetch was
 * released), or the process died with the request in flight (a SIGKILL before the answer reached
 * the answer journal, robots-journal.ts, which keeps every answer received until RobotsCache's
 * merge). It is asked again; `reasked` counts the first kind and `lostAsks` the second
 * (asks recorded by an earlier run of the crawl).
 */
import { DrumProxy, type DrumThread } from '../threads/drum/drum-proxy.js';
import { HostDrum, ROBOTS_SETTLE_KEYS, type RobotsDrumStats } from './host-drum.js';

export type { RobotsDrumStats } from './host-drum.js';

export type RobotsAskListener = (hostHi: number, hostLo: number, askedBefore: number | null, aux: Uint8Array) => void;

export class RobotsRequested extends HostDrum {
  private asks = 0;
  private firsts = 0;
  reasked = 0;
  lostAsks = 0;
  private readonly value = new Uint8Array(8);
  private readonly view = new DataView(this.value.buffer);

  private constructor(drum: DrumProxy, private readonly openedAt: number) {
    super(drum);
  }

  /** `ramBytes` is R; one bucket for the reason given in robots-cache.ts. */
  static async open(dir: string, ramBytes: number, onAsk: RobotsAskListener, thread?: DrumThread, clock: () => number = Date.now): Promise<RobotsRequested> {
    let self: RobotsRequested | null = null;
    const drum = await DrumProxy.open(
      dir,
      { ramBytes, buckets: 1, valueBytes: 8, auxBytesHint: 40, settleKeys: ROBOTS_SETTLE_KEYS },
      (batch) => {
        for (const r of batch) {
          let before: number | null = null;
          if (r.unique || r.value === null) self!.firsts++;
          else {
            before = new DataView(r.value.buffer, r.value.byteOffset, 8).getFloat64(0, true);
            if (before < self!.openedAt) self!.lostAsks++;
            else self!.reasked++;
          }
          onAsk(r.keyHi, r.keyLo, before, r.aux ?? new Uint8Array(0));
        }
      },
      thread !== undefined ? { thread } : {},
    );
    self = new RobotsRequested(drum, clock());
    return self;
  }

  /** Records the ask of `host` at `now`; the merge answers through onAsk with the previous ask. */
  checkUpdate(hostHi: number, hostLo: number, now: number, aux: Uint8Array): void {
    this.asks++;
    this.view.setFloat64(0, now, true);
    this.drum.checkUpdate(hostHi, hostLo, this.value, aux);
  }

  stats(): RobotsDrumStats & { asks: number; firsts: number; reasked: number; lostAsks: number } {
    return { ...this.drum.stats(), asks: this.asks, firsts: this.firsts, reasked: this.reasked, lostAsks: this.lostAsks };
  }
}
