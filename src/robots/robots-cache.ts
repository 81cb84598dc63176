/**
 * RobotsCache (thesis VII.1, Fig. 2): a DRUM keyed by the 64-bit hash of an authority
 * (scheme://host[:port], src/util/authority.ts) whose value is that authority's robots answer
 * (src/robots/robots-entry.ts: rules, outcome, expiry, sitemaps). It runs in a DRUM worker thread
 * (drum-proxy.ts) like URLseen and commits the same way: a bucket's answers are in Z once its
 * merge has committed (manifest written atomically after Z′ is fsynced), and a crash loses at most
 * the tuples of merges not yet committed (docs/drum.md, "Crash safety").
 *
 * Two operations: `check(key, aux)` — the answer comes back in the next merge, in arrival order,
 * through `onCheck` (aux is the caller's, here the host key, host name and authority);
 * `update(key, entry)` — a fresh robots.txt answer replaces the stored one (DRUM's default merge:
 * overwrite). A check that arrives after an update of the same key sees that update (DRUM applies
 * one key's tuples in arrival order), so an answer is visible to every later check even before it
 * is merged.
 */
import { DrumProxy, type DrumThread } from '../threads/drum/drum-proxy.js';
import { decodeRobotsEntry, encodeRobotsEntry, type RobotsEntry } from './robots-entry.js';
import { HostDrum, ROBOTS_SETTLE_KEYS, type RobotsDrumStats } from './host-drum.js';

export type RobotsCheckListener = (hostHi: number, hostLo: number, entry: RobotsEntry | null, aux: Uint8Array) => void;

export class RobotsCache extends HostDrum {
  private checks = 0;
  private hits = 0;
  private updates = 0;
  private corrupt = 0;

  /**
   * `ramBytes` is the DRUM's R; eq. (8) of docs/drum.md's model gives r from it (values ~60 bytes,
   * aux ~40 bytes per check). One bucket: the stage's rounds are mostly due by time, not by a full
   * bucket, and each round merges every bucket, so more buckets would only add fsyncs per round (as
   * for STAR's store, frontier-port.ts).
   */
  static async open(dir: string, ramBytes: number, onCheck: RobotsCheckListener, thread?: DrumThread): Promise<RobotsCache> {
    let self: RobotsCache | null = null;
    const drum = await DrumProxy.open(
      dir,
      { ramBytes, buckets: 1, valueBytes: 'variable', valueBytesHint: 60, auxBytesHint: 40, settleKeys: ROBOTS_SETTLE_KEYS },
      (batch) => {
        for (const r of batch) {
          if (r.op !== 'check') continue;
          let entry: RobotsEntry | null = null;
          if (!r.unique && r.value !== null) {
            try {
              entry = decodeRobotsEntry(r.value);
            } catch {
              self!.corrupt++; // an unreadable value is a miss: the host is asked again
            }
          }
          if (entry !== null) self!.hits++;
          onCheck(r.keyHi, r.keyLo, entry, r.aux ?? new Uint8Array(0));
        }
      },
      thread !== undefined ? { thread } : {},
    );
    self = new RobotsCache(drum);
    return self;
  }

  check(hostHi: number, hostLo: number, aux: Uint8Array): void {
    this.checks++;
    this.drum.check(hostHi, hostLo, aux);
  }

  update(hostHi: number, hostLo: number, entry: RobotsEntry): void {
    this.updateEncoded(hostHi, hostLo, encodeRobotsEntry(entry));
  }

  /** update() of an entry already encoded (encodeRobotsEntry's bytes: the robots stage journals the same bytes). */
  updateEncoded(hostHi: number, hostLo: number, value: Uint8Array): void {
    this.updates++;
    this.drum.update(hostHi, hostLo, value);
  }

  stats(): RobotsDrumStats & { checks: number; hits: number; updates: number; corrupt: number } {
    return { ...this.drum.stats(), checks: this.checks, hits: this.hits, updates: this.updates, corrupt: this.corrupt };
  }
}
