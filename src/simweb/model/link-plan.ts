/**
 * Link planning: the outgoing links of one page of the simulated web, as numbers (intra-host,
 * intra-PLD and Zipf-distributed inter-PLD links, spam-farm links, duplicates, trap entries, a
 * <base> host; docs/simweb.md, "The model"), before any byte of HTML is written.
 *
 * Invariant: the plan of (host, page, sid) is a pure function of them and the seed; the renderer
 * (render.ts) serializes exactly these targets, and pageLinks (graph.ts) reports them as ground
 * truth. Cost: O(links) per page into one reused plan (bound: the largest page's link count).
 */
import { h2, h3, h4, unit, below, zipf, mix32 } from './hash.js';
import { S_FARM, S_PAGE, S_SID, type HostInfo, type HostModel } from './host-model.js';

/** One outgoing link as the generator knows it (for ground truth). */
export interface LinkTarget { host: string; path: string; }

/** Plan entry kinds: a page of a PLD host, of a spam-farm host, or a special (trap) path. */
export const KIND_PLD = 0, KIND_FARM = 1, KIND_SPECIAL = 2;

export function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** The numeric link list of one page (reused scratch; bound: the largest page's link count). */
export class LinkPlan {
  n = 0;
  baseHost = -1;
  kind = new Uint8Array(256);
  a = new Int32Array(256);
  b = new Int32Array(256);
  page = new Int32Array(256);
  sid = new Float64Array(256); // -1 = none, else a uint32 session id
  tag = new Uint8Array(256);
  r = new Uint32Array(256);
  special: (string | null)[] = [];

  ensure(n: number): void {
    if (this.n + n <= this.kind.length) return;
    const size = Math.max(this.kind.length * 2, this.n + n);
    const grow = <T extends Uint8Array | Int32Array | Uint32Array | Float64Array>(x: T, make: (k: number) => T): T => { const y = make(size); y.set(x); return y; };
    this.kind = grow(this.kind, (k) => new Uint8Array(k));
    this.a = grow(this.a, (k) => new Int32Array(k));
    this.b = grow(this.b, (k) => new Int32Array(k));
    this.page = grow(this.page, (k) => new Int32Array(k));
    this.sid = grow(this.sid, (k) => new Float64Array(k));
    this.tag = grow(this.tag, (k) => new Uint8Array(k));
    this.r = grow(this.r, (k) => new Uint32Array(k));
  }

  push(kind: number, a: number, b: number, page: number, sid: number, tag: number, r: number): void {
    const i = this.n++;
    this.kind[i] = kind; this.a[i] = a; this.b[i] = b; this.page[i] = page; this.sid[i] = sid; this.tag[i] = tag; this.r[i] = r;
    this.special[i] = null;
  }

  pushSpecial(a: number, b: number, path: string, tag: number, r: number): void {
    this.ensure(1);
    this.push(KIND_SPECIAL, a, b, 0, -1, tag, r);
    this.special[this.n - 1] = path;
  }

  /** Repeat entry `from` (an intra-page duplicate) with a new tag and href form. */
  copy(from: number, tag: number, r: number): void {
    this.push(this.kind[from]!, this.a[from]!, this.b[from]!, this.page[from]!, this.sid[from]!, tag, r);
    this.special[this.n - 1] = this.special[from]!;
  }
}

/**
 * Fill `plan` with the link targets of /p/n in document order (duplicates included) and its base
 * host. `sid` is the session id of the requested URL on a 'session' trap host (0 otherwise).
 * The plan is numeric (kind, PLD/farm, host, page) so rendering never builds URL strings.
 */
export function planLinks(web: HostModel, info: HostInfo, n: number, sid: number, plan: LinkPlan): void {
  const p = web.params;
  const seed = web.seed;
  const kind = web.pageKind(info, n);
  const key = info.farm >= 0 ? (info.farm + 1) * -7919 : info.pldIndex;
  const hp = h4(seed ^ S_PAGE, key, info.hostIndex, n ^ 0x5a5a5a5a);
  let count: number;
  if (kind === 'frameset') count = 2 + (hp % 3);
  else if (kind !== 'html') count = 0;
  else if (info.farm >= 0) count = p.spamLinksPerPage;
  else count = Math.round((unit(h2(hp, 1)) + unit(h2(hp, 2))) * p.linksPerPageMean);
  plan.n = 0;
  plan.baseHost = -1;
  if (kind === 'html' && info.farm < 0 && unit(h2(hp, 3)) < p.baseHrefShare) {
    const hc = web.hostCount(info.pldIndex);
    plan.baseHost = hc > 1 ? (info.hostIndex + 1) % hc : info.hostIndex;
  }
  const sess = info.trap === 'session';
  const sidSeed = h2(seed ^ S_SID, sid);
  plan.ensure(count + 8);
  for (let t = 0; t < count; t++) {
    const r = h2(hp, 100 + t);
    const r2 = mix32(r + 0x3c6ef372);
    const u = unit(r);
    const tb = r & 0xff;
    const tag = kind === 'frameset' ? 4 : tb < 8 ? 1 : tb < 13 ? 2 : tb < 18 ? 3 : 0;
    if (t > 2 && plan.n > 0 && unit(r2) < p.dupLinkShare) {
      plan.copy(below(mix32(r2 ^ 0x1234567), plan.n), tag, r2);
      continue;
    }
    if (info.farm >= 0) {
      // Spam farm: the first spamCrossLinks links go to home pages of other farms (bought in-degree,
      // cliques); the rest to other hosts and pages of the same farm, any of 2^31 (or of its
      // spamHostsPerFarm hosts) — an unbounded farm mints a fresh host name with almost every link.
      if (t < p.spamCrossLinks && p.spamFarms > 1) {
        const other = (info.farm + 1 + below(mix32(r2 + 14), p.spamFarms - 1)) % p.spamFarms;
        plan.push(KIND_FARM, other, 0, 0, -1, tag, r2);
        continue;
      }
      const hostSpace = p.spamHostsPerFarm >= 1 ? Math.floor(p.spamHostsPerFarm) : t < 2 ? 16 : 0x7fffffff;
      const j = (mix32(r2 + 3) & 0x7fffffff) % hostSpace;
      plan.push(KIND_FARM, info.farm, j, mix32(r2 + 4) & 0x7fffffff, -1, tag, r2);
      continue;
    }
    let self = -1;
    if (t === 0) self = 0;
    else if (t === 1 && n + 1 < info.pages) self = n + 1;
    else if (t === 2 && n > 0) self = n - 1;
    else if (u < p.intraHostShare) {
      const v = mix32(r2 + 5);
      self = (v & 1) === 0 ? Math.min(info.pages - 1, n + 1 + ((v >>> 1) % 20)) : below(mix32(r2 + 6), info.pages);
    }
    if (self >= 0) {
      plan.push(KIND_PLD, info.pldIndex, info.hostIndex, self, sess ? h2(sidSeed, self) : -1, tag, r2);
    } else if (u < p.intraHostShare + p.intraPldShare) {
      const j = below(mix32(r2 + 7), web.hostCount(info.pldIndex));
      plan.push(KIND_PLD, info.pldIndex, j, below(mix32(r2 + 8), web.pageCount(info.pldIndex, j)), -1, tag, r2);
    } else {
      const t2 = zipf(unit(mix32(r2 + 9)), p.plds, p.pldZipf);
      const v = mix32(r2 + 10);
      const j = (v & 1) === 0 ? 0 : below(mix32(r2 + 11), web.hostCount(t2));
      const m = unit(mix32(r2 + 12)) < 0.4 ? 0 : below(mix32(r2 + 13), web.pageCount(t2, j));
      plan.push(KIND_PLD, t2, j, m, -1, tag, r2);
    }
  }
  if (kind === 'html' && info.farm < 0) {
    if (n === 0 && info.hostIndex === 0) {
      for (const k of web.farmSources.get(info.pldIndex) ?? []) {
        plan.ensure(1);
        const entryHost = h3(seed ^ S_FARM, k, 1) & 0xffff;
        const hostSpace = p.spamHostsPerFarm >= 1 ? Math.floor(p.spamHostsPerFarm) : 0x10000;
        plan.push(KIND_FARM, k, entryHost % hostSpace, h3(seed ^ S_FARM, k, 2) & 0xffff, -1, 0, h3(seed, k, 3));
      }
    }
    for (let r = 1; r <= p.ringLinks && r < p.plds; r++) {
      plan.ensure(1);
      plan.push(KIND_PLD, (info.pldIndex + r) % p.plds, 0, 0, -1, 0, h2(hp, 200 + r));
    }
    if (info.trap && info.trap !== 'session' && n % 5 === 0) {
      plan.pushSpecial(info.pldIndex, info.hostIndex, info.trap === 'calendar' ? '/cal/2026/1' : '/t/a/', 0, h2(hp, 99));
    }
  }
}

export function planHost(web: HostModel, plan: LinkPlan, t: number): string {
  const a = plan.a[t]!, b = plan.b[t]!;
  if (plan.kind[t] === KIND_FARM) return b === 0 ? `www.farm${a}.test` : `h${b}.farm${a}.test`;
  return web.hostName(a, b);
}

export function planPath(plan: LinkPlan, t: number): string {
  if (plan.kind[t] === KIND_SPECIAL) return plan.special[t]!;
  const sid = plan.sid[t]!;
  return sid < 0 ? `/p/${plan.page[t]}` : `/p/${plan.page[t]}?sid=${hex8(sid)}`;
}
