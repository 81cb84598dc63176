/**
 * The synthetic URL stream every method of bench/alpha checks: pages of l = 59 links, each link a
 * new URL with probability p = 1/9 (thesis §IV.5: l = 59, p = 1/9) and otherwise a repeat of a URL
 * seen before (uniform over the past: batch checks have no cache, so which URL repeats does not
 * change their I/O). URL text is a deterministic function of the URL's id, 60–160 bytes long
 * (mean ≈ 110, the thesis' b), so the stream of n links is the same for every method and every n.
 */
import { fingerprintInto } from '../../src/url/index.js';

/** 32-bit mixer (murmur3 finalizer). */
export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const FILL = 'abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz0123456789_abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnopqrstuvwxyz';

/** Text of URL `id`: 60 + (h mod 101) bytes, ASCII (bytes = characters). */
export function urlText(id: number): string {
  const h = mix32(id * 2654435761 + 17);
  const head = `http://www.site${h % 50000}.example/d${(h >>> 8) % 97}/page${id}/`;
  const len = 60 + (mix32(h ^ 0x9e3779b9) % 101);
  const need = len - head.length - 5;
  const off = h % 20;
  return need > 0 ? head + FILL.slice(off, off + need) + '.html' : head.slice(0, len);
}

export const STREAM = { l: 59, p: 1 / 9 } as const;

/**
 * Iterates n links: calls `each(hi, lo, text)` with the 64-bit xxhash key of the URL text (src/url
 * fingerprintInto, the key drumcrawl uses) and the text itself.
 */
export class UrlStream {
  private nextId = 0;
  private state: number;
  private readonly key = new Uint32Array(2);
  readonly enc = new TextEncoder();
  textBytes = 0;
  links = 0;

  constructor(seed = 1, private readonly p = STREAM.p) {
    this.state = mix32(seed) || 1;
  }

  private rand(): number {
    // xorshift32: cheap, deterministic
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 4294967296;
  }

  /** Distinct URLs produced so far (the ground truth every method's unique count must equal). */
  get distinct(): number {
    return this.nextId;
  }

  /** The next link: its id (ids are dense; id ≥ previous max means unique). */
  nextLinkId(): number {
    this.links++;
    if (this.nextId === 0 || this.rand() < this.p) return this.nextId++;
    return Math.floor(this.rand() * this.nextId);
  }

  run(n: number, each: (hi: number, lo: number, text: string) => void): void {
    for (let i = 0; i < n; i++) {
      const text = urlText(this.nextLinkId());
      fingerprintInto(text, this.key, 0);
      this.textBytes += text.length;
      each(this.key[0]!, this.key[1]!, text);
    }
  }
}
