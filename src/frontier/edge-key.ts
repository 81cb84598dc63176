/** PLDedges keys (thesis VI.2: "PLDedges keeps the distinct pairs", keyed by a hash of the pair). */

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
