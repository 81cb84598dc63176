/**
 * What RobotsCache and RobotsRequested (thesis VII.1, Fig. 2) share: a DRUM keyed by the 64-bit
 * hash of an authority (scheme://host[:port], src/util/authority.ts; RFC 9309 §2.3: a robots.txt
 * governs one scheme, host and port) in a DRUM worker thread (drum-proxy.ts), merged by the robots stage's rounds and at
 * checkpoints, committed like URLseen (docs/drum.md, "Crash safety").
 */
import type { DrumProxy, DrumProxyStats } from '../threads/drum/drum-proxy.js';

export type RobotsDrumStats = DrumProxyStats;

/**
 * Keys in Z before they settle into the deep part (DrumOptions.settleKeys, src/drum/deep.ts). The
 * robots stage merges both DRUMs every round (every 20 ms to 2 s), not when r is reached, and a
 * merge passed over all of Z: the rounds' cost grew with the hosts answered, ~350 MB of merge I/O
 * a minute ten minutes into a 10^7-host crawl between them (state/robotscache, robotsrequested). With
 * a deep part a round passes over at most ~2^15 keys of Z (~3 MB) and looks each older authority
 * up by one block read; the deep part is rewritten once per 2^15 new authorities.
 */
export const ROBOTS_SETTLE_KEYS = 1 << 15;

export abstract class HostDrum {
  protected constructor(protected readonly drum: DrumProxy) {}

  /** A bucket reached r: the next merge is due now. */
  get needsMerge(): boolean {
    return this.drum.needsMerge;
  }

  /** Merges every bucket; the results arrive through the listener given at open. */
  merge(): Promise<void> {
    return this.drum.merge();
  }

  flush(): Promise<void> {
    return this.drum.flush();
  }

  close(): Promise<void> {
    return this.drum.close();
  }
}
