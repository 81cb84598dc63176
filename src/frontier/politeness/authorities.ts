/**
 * The robots answers a host-table entry holds, one per authority of the host (RFC 9309 §2.3: a
 * robots.txt governs one scheme, host and port; src/util/authority.ts). Politeness stays per host
 * and per IP (the host entry's delays, the IP heap): `http://a/`, `https://a/` and `http://a:8080/`
 * share one host entry and its τh, and each is judged by its own rules.
 *
 * An authority is *known* (its rules, expiry and Crawl-delay came) or *wanted* (a URL of it came,
 * its answer has not): the robots gate (robots-gate.ts) asks the host's wanted authorities one at a
 * time through QD, and holds the host's URLs meanwhile, as it does while an expired answer is asked
 * again. The host's expiry is the earliest of its known answers', its Crawl-delay the largest (a
 * delay of the host, whichever of its services asked for it).
 *
 * RAM bound: at most MAX_AUTHORITIES_PER_HOST entries per host. A URL of a further authority takes
 * the place of the known answer learnt first (rules are needed only when a URL is admitted: a URL
 * of the forgotten authority asks again, and the robots stage answers from RobotsCache without a
 * new robots.txt request); when every place is wanted, the URL waits in QR for an answer to free
 * one. Each entry's origin string and compiled rules are charged to the host table's byte bound
 * (`ramBytes`, host-table.ts maxHostBytes), so the bound holds whatever number of ports and schemes
 * the web links to.
 */
/** The part of src/robots' RobotsRules the frontier uses. */
export interface RobotsRulesLike {
  isAllowed(pathAndQuery: string): boolean;
  /** Estimated heap bytes of the compiled rules (charged to the host table's byte bound). */
  readonly ramBytes?: number;
}

/** Authorities one host entry holds answers for (see the top comment). */
export const MAX_AUTHORITIES_PER_HOST = 8;
/** Estimated heap bytes of one entry besides its origin string and rules (the object, its array slot). */
const ENTRY_BYTES = 72;
/**
 * Estimated heap bytes of a HostAuthorities besides its entries: the object, its array and the
 * array's backing store (V8 grows an empty array's store to 17 slots at its first push).
 * test/frontier/ram-estimates.test.ts measures the host table with them and holds the estimate above it.
 */
const LIST_BYTES = 216;

export interface AuthorityRobots {
  /** robotsAuthorityOf's string: scheme://host[:port] */
  readonly origin: string;
  known: boolean;
  rules: RobotsRulesLike | null;
  expiresAt: number;
  crawlDelayMs: number;
}

function stringBytes(s: string): number {
  return s.length === 0 ? 0 : 16 + ((s.length + 7) & ~7);
}

export class HostAuthorities {
  private readonly list: AuthorityRobots[] = [];

  get size(): number {
    return this.list.length;
  }

  /**
   * The entry of the authority `url` belongs to, or undefined. A canonical URL whose authority is
   * held is found by prefix, without building its authority string.
   */
  findUrl(url: string): AuthorityRobots | undefined {
    for (const a of this.list) {
      const n = a.origin.length;
      if (url.startsWith(a.origin)) {
        const c = url.charCodeAt(n);
        if (Number.isNaN(c) || c === 47 || c === 63 || c === 35) return a;
      }
    }
    return undefined;
  }

  find(origin: string): AuthorityRobots | undefined {
    for (const a of this.list) if (a.origin === origin) return a;
    return undefined;
  }

  /**
   * Marks `origin` wanted (a URL of it waits for its answer). False when every place holds a
   * wanted authority (the URL waits in QR); otherwise the known answer learnt first gives way when
   * the list is full.
   */
  want(origin: string): boolean {
    if (this.find(origin) !== undefined) return true;
    if (this.list.length >= MAX_AUTHORITIES_PER_HOST) {
      const k = this.list.findIndex((a) => a.known);
      if (k < 0) return false;
      this.list.splice(k, 1);
    }
    this.list.push({ origin, known: false, rules: null, expiresAt: 0, crawlDelayMs: 0 });
    return true;
  }

  /** The first wanted authority (asked next), or undefined. */
  nextWanted(): AuthorityRobots | undefined {
    for (const a of this.list) if (!a.known) return a;
    return undefined;
  }

  /** An answer for `origin` (kept when there is room or a known answer can give way). */
  answer(origin: string, rules: RobotsRulesLike | null, expiresAt: number, crawlDelayMs: number): void {
    let a = this.find(origin);
    if (a === undefined) {
      if (!this.want(origin)) return;
      a = this.find(origin)!;
    }
    a.known = true;
    a.rules = rules;
    a.expiresAt = expiresAt;
    a.crawlDelayMs = crawlDelayMs;
  }

  /** Forgets the known answers expired at `now` (their authorities are asked again when a URL comes). */
  forgetExpired(now: number): void {
    for (let k = this.list.length - 1; k >= 0; k--) {
      const a = this.list[k]!;
      if (a.known && a.expiresAt <= now) this.list.splice(k, 1);
    }
  }

  clear(): void {
    this.list.length = 0;
  }

  /** The earliest expiry of the known answers (Infinity when none). */
  get expiresAt(): number {
    let t = Infinity;
    for (const a of this.list) if (a.known && a.expiresAt < t) t = a.expiresAt;
    return t;
  }

  /** The largest Crawl-delay of the known answers (0 when none). */
  get crawlDelayMs(): number {
    let d = 0;
    for (const a of this.list) if (a.known && a.crawlDelayMs > d) d = a.crawlDelayMs;
    return d;
  }

  /** Estimated heap bytes: the entries, their origins and compiled rules (charged to the host table). */
  get ramBytes(): number {
    let b = LIST_BYTES;
    for (const a of this.list) b += ENTRY_BYTES + stringBytes(a.origin) + (a.rules?.ramBytes ?? 0);
    return b;
  }
}
