/**
 * Who owns what (docs/cluster.md, "Partitions and placement"): a PLD's partition is its key mod P,
 * with P fixed when the crawl is created; partitions are placed on the member nodes by rendezvous
 * (highest random weight) hashing, so that every node computes the same placement from the same
 * member list, and a node joining or leaving moves only the partitions it gains or had (1/N of
 * them on average), never partitions between the nodes that stay.
 *
 * The PLD key is the 64-bit fingerprint src/url computes (two 32-bit words, uniformly distributed):
 * all of a PLD's URLs, hosts, robots.txt, URLseen entries, STAR in-degree and BEAST counts land in
 * one partition, so those structures need no protocol between nodes (IRLbot thesis §I: m servers
 * partition "the subset of all URLs and data structures between themselves").
 */

/** Partitions a new crawl gets unless `--partitions` says otherwise. */
export const DEFAULT_PARTITIONS = 32;
/** At most this many partitions (a subject, a consumer and a lease each). */
export const MAX_PARTITIONS = 1024;

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The partition (0 ≤ p < P) of the PLD whose key is (hi, lo). */
export function partitionOf(pldHi: number, pldLo: number, P: number): number {
  return fmix32((pldHi ^ Math.imul(pldLo, 0x9e3779b1)) >>> 0) % P;
}

/** FNV-1a of a string's UTF-16 units, finalised: a node id's seed for its weights. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h >>> 0);
}

/** Rendezvous weight of `node` (its hashString) for partition p. */
function weight(nodeHash: number, p: number): number {
  return fmix32((nodeHash ^ Math.imul(p + 1, 0x9e3779b1)) >>> 0);
}

/**
 * The member that partition p is placed on: the highest weight (ties, which need equal 32-bit
 * weights, go to the smaller id). null when there is no member.
 */
export function ownerOf(p: number, members: readonly string[]): string | null {
  let best: string | null = null;
  let bestW = -1;
  for (const m of members) {
    const w = weight(hashString(m), p);
    if (w > bestW || (w === bestW && best !== null && m < best)) {
      best = m;
      bestW = w;
    }
  }
  return best;
}

/** The whole placement: owner of each partition 0..P-1 (null with no member). */
export function placement(P: number, members: readonly string[]): (string | null)[] {
  const hashes = members.map((m) => ({ m, h: hashString(m) }));
  const out: (string | null)[] = [];
  for (let p = 0; p < P; p++) {
    let best: string | null = null;
    let bestW = -1;
    for (const { m, h } of hashes) {
      const w = weight(h, p);
      if (w > bestW || (w === bestW && best !== null && m < best)) {
        best = m;
        bestW = w;
      }
    }
    out.push(best);
  }
  return out;
}

/** A node id as the cluster takes it: 1–64 of [A-Za-z0-9_-] (a KV key token and a consumer name part). */
export const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A crawl name: 1–32 of [a-z0-9_-] (part of the stream's and buckets' names). */
export const CRAWL_NAME = /^[a-z0-9_-]{1,32}$/;
