/**
 * PLDedges keys (thesis VI.2: "PLDedges keeps the distinct pairs", keyed by a hash of the pair) and
 * the vote slot of STAR's trusted in-degree (star.ts).
 */

/** Edge key: two independent 32-bit mixes of the four words (the thesis keys PLDedges by a hash). */
export function edgeKey(sHi: number, sLo: number, dHi: number, dLo: number, out: Uint32Array, o: number): void {
  let a = Math.imul(sHi ^ 0x9e3779b9, 0x85ebca6b) ^ sLo;
  a = Math.imul(a ^ (a >>> 15), 0xc2b2ae35) ^ dHi;
  a = Math.imul(a ^ (a >>> 13), 0x27d4eb2f) ^ dLo;
  a = Math.imul(a ^ (a >>> 16), 0x165667b1);
  let b = Math.imul(dLo ^ 0x7f4a7c15, 0xcc9e2d51) ^ dHi;
  b = Math.imul(b ^ (b >>> 15), 0x1b873593) ^ sLo;
  b = Math.imul(b ^ (b >>> 13), 0xe6546b64) ^ sHi;
  b = Math.imul(b ^ (b >>> 16), 0x85ebca6b);
  out[o] = (a ^ (a >>> 16)) >>> 0;
  out[o + 1] = (b ^ (b >>> 16)) >>> 0;
}

/**
 * The vote slot of a linking page: a small hash of its URL's path, scheme, authority, query and
 * fragment left out. STAR counts one vote per (source PLD, slot mod votesPerSource) for a target,
 * so copies of one page under session ids or tracking parameters — a trap can serve thousands — are
 * one vote, while a site that links to another from several of its pages gives several.
 */
export function pathSlot(url: string): number {
  let i = url.indexOf('//');
  i = i < 0 ? 0 : url.indexOf('/', i + 2);
  if (i < 0) return 0;
  let h = 0x811c9dc5;
  for (; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 || c === 35) break; // '?' or '#'
    h = Math.imul(h ^ c, 0x01000193);
  }
  return (h ^ (h >>> 16)) & 0xff;
}
