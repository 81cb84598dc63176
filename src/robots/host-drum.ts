/**
 * What RobotsCache and RobotsRequested (thesis VII.1, Fig. 2) share: a DRUM keyed by the 64-bit
 * hash of an authority (scheme://host[:port], src/util/authority.ts; RFC 9309 §2.3: a robots.txt
 * governs one scheme, host and port) in a DRUM worker thread (drum-proxy.ts), merged by the robots stage's rounds and at
 * checkpoints, committed like URLseen (docs/drum.md, "Crash safety").
 */
import type { DrumProxy, DrumProxyStats } from '../threads/drum/drum-proxy.js';

export type RobotsDrumStats = DrumProxyStats;

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
