/**
 * Pay-level domains (registrable domains) from the Public Suffix List.
 *
 * STAR (IRLbot thesis ch. VI) budgets crawling per pay-level domain, the unit an owner pays for.
 * The thesis' Table VIII counts blogspot.com as ONE PLD with many hosts, i.e. it uses the ICANN
 * section of the list only; that is our default. `privateDomains: true` follows the full list
 * (then `foo.blogspot.com` is its own PLD), which is what the official PSL tests expect.
 *
 * Structure: one Map from every rule suffix (ASCII) to bit flags. A lookup walks labels from the
 * right, one Map probe per label (hosts have 2–4 labels), so no trie nodes are allocated per call.
 * Results are memoized per host in a bounded map (PLD_CACHE_MAX entries per mode, cleared when
 * full): ~59 links per page mostly share one host. Why our own table and not tldts: we control the
 * ICANN/private split exactly and use the same snapshot as the conformance file (docs/url.md).
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { PSL_ICANN_RULES, PSL_PRIVATE_RULES } from './data/psl-data.js';
import { unpinned } from './host.js';

// Flags per suffix: a rule `x`, a wildcard `*.x` (stored on x), an exception `!x`; one set of
// three bits per section. NODE marks suffixes of longer rules (keep walking).
const RULE = 1;
const WILD = 2;
const EXC = 4;
const PRIVATE_SHIFT = 3;
const NODE = 64;

/**
 * The PSL as one map (rule → flags, and NODE for every shorter suffix of a rule), built on the
 * first lookup rather than when this module loads: ~10,000 rules take tens of ms and megabytes of
 * young-generation garbage to build, which a command that never asks for a PLD (`--version`, a
 * crawl's first robots.txt requests: src/crawl/ports/early-robots.ts) need not pay before it acts.
 */
let table: Map<string, number> | null = null;

function rules(): Map<string, number> {
  if (table === null) {
    table = new Map<string, number>();
    addRules(table, PSL_ICANN_RULES, 0);
    addRules(table, PSL_PRIVATE_RULES, PRIVATE_SHIFT);
  }
  return table;
}

function addRules(table: Map<string, number>, text: string, shift: number): void {
  for (const line of text.split('\n')) {
    let rule = line;
    let flag = RULE;
    if (rule.startsWith('!')) {
      flag = EXC;
      rule = rule.slice(1);
    } else if (rule.startsWith('*.')) {
      flag = WILD;
      rule = rule.slice(2);
    }
    table.set(rule, (table.get(rule) ?? 0) | (flag << shift));
    // Every shorter suffix becomes a node so the right-to-left walk knows to continue.
    let dot = rule.indexOf('.');
    while (dot >= 0) {
      const suffix = rule.slice(dot + 1);
      table.set(suffix, (table.get(suffix) ?? 0) | NODE);
      dot = rule.indexOf('.', dot + 1);
    }
  }
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Number of PSL rules loaded per section (for docs/tests). */
export const PSL_RULE_COUNTS = Object.freeze({
  icann: lineCount(PSL_ICANN_RULES),
  private: lineCount(PSL_PRIVATE_RULES),
});

/**
 * Start index of the public suffix of an ASCII, lower-case host with no empty labels, by the PSL
 * algorithm: the longest matching rule wins, an exception rule beats all, the implicit rule is `*`.
 */
function publicSuffixStart(host: string, withPrivate: boolean): number {
  const table = rules();
  let psStart = host.lastIndexOf('.') + 1; // implicit "*" rule: the last label
  let prevFlags = 0;
  let labelEnd = host.length;
  for (;;) {
    const labelStart = host.lastIndexOf('.', labelEnd - 1) + 1;
    const f = table.get(labelStart === 0 ? host : host.slice(labelStart));
    if ((prevFlags & WILD) !== 0) psStart = labelStart; // `*.parent` matches this label
    if (f === undefined) break;
    // ICANN bits, or-ed with the PRIVATE bits when the full list is wanted.
    const s = withPrivate ? (f | (f >> PRIVATE_SHIFT)) & 7 : f & 7;
    if ((s & EXC) !== 0) {
      // Exception `!a.b.c`: the public suffix is `b.c`.
      psStart = host.indexOf('.', labelStart) + 1;
      break;
    }
    if ((s & RULE) !== 0) psStart = labelStart;
    prevFlags = s;
    if (labelStart === 0) break;
    labelEnd = labelStart - 1;
  }
  return psStart;
}

const IPV4_RE = /^(?:\d{1,3}\.){3}\d{1,3}$/;

function registrableAscii(host: string, withPrivate: boolean): string | null {
  if (host.length === 0 || host.charCodeAt(0) === 46 || host.indexOf('..') >= 0) return null;
  const ps = publicSuffixStart(host, withPrivate);
  if (ps === 0) return null; // the host is itself a public suffix
  const start = host.lastIndexOf('.', ps - 2) + 1;
  return start === 0 ? host : host.slice(start);
}

const PLD_CACHE_MAX = 1 << 16;
const cacheIcann = new Map<string, string | null>();
const cacheAll = new Map<string, string | null>();

export interface RegistrableDomainOptions {
  /** Use the PRIVATE section too (blogspot.com, github.io … become public suffixes). @default false */
  privateDomains?: boolean;
}

/**
 * The registrable (pay-level) domain of `host`, or null when the host is a public suffix itself,
 * empty, or starts with a dot / has an empty label.
 *
 * - Case-insensitive; one trailing dot (fully-qualified form) is ignored.
 * - IP literals (dotted IPv4, bracketed or bare IPv6) are their own PLD.
 * - ASCII/punycode input gives ASCII output; Unicode input gives Unicode output (as the PSL tests
 *   expect). Canonical URLs always carry ASCII hosts.
 */
export function registrableDomain(host: string, options?: RegistrableDomainOptions): string | null {
  if (typeof host !== 'string') return null;
  const priv = options?.privateDomains === true;
  // Two-entry memo of the last two distinct hosts: a page's links mostly name its own host with an
  // occasional other one in between, and LinkResolver.lastHost is then the very same string object,
  // so these are pointer comparisons; the Map lookup below compares string contents.
  if (priv === lastPriv) {
    if (host === memoHost0) return memoPld0;
    if (host === memoHost1) {
      const p = memoPld1;
      memoHost1 = memoHost0;
      memoPld1 = memoPld0;
      memoHost0 = host;
      memoPld0 = p;
      return p;
    }
  } else {
    // The memo holds the other mode's results: empty it. ('\u0000' is never a host of a URL, and
    // its PLD is null under the implicit rule anyway, the value the empty memo returns.)
    lastPriv = priv;
    memoHost0 = memoHost1 = '\u0000';
    memoPld0 = memoPld1 = null;
  }
  const cache = priv ? cacheAll : cacheIcann;
  let r = cache.get(host);
  if (r === undefined) {
    const computed = computeRegistrable(host, priv);
    if (cache.size >= PLD_CACHE_MAX) cache.clear();
    // Key and value copied (unpinned): a host sliced out of a parsed page would keep the page's
    // whole text alive for as long as the entry lives.
    const key = unpinned(host);
    r = computed === null ? null : computed === host ? key : unpinned(computed);
    cache.set(key, r);
  }
  memoHost1 = memoHost0;
  memoPld1 = memoPld0;
  memoHost0 = host;
  memoPld0 = r;
  return r;
}

let lastPriv = false;
let memoHost0 = '\u0000';
let memoPld0: string | null = null;
let memoHost1 = '\u0000';
let memoPld1: string | null = null;

function computeRegistrable(input: string, priv: boolean): string | null {
  let host = input;
  if (host.length > 1 && host.charCodeAt(host.length - 1) === 46) host = host.slice(0, -1);
  if (host.charCodeAt(0) === 91 || host.indexOf(':') >= 0) return host.toLowerCase(); // IPv6 literal
  // eslint-disable-next-line no-control-regex -- an all-ASCII test: the range starts at NUL on purpose
  if (/^[\x00-\x7f]*$/.test(host)) {
    const lower = host.toLowerCase();
    if (IPV4_RE.test(lower)) return lower;
    return registrableAscii(lower, priv);
  }
  if (host.charCodeAt(0) === 46) return null;
  const ascii = domainToASCII(host);
  if (ascii === '') return null;
  const r = registrableAscii(ascii, priv);
  return r === null ? null : domainToUnicode(r);
}

/** `registrableDomain(host) ?? host`: the key STAR groups a host under (single-label and public-suffix hosts are their own group). */
export function pldOrHost(host: string, options?: RegistrableDomainOptions): string {
  return registrableDomain(host, options) ?? host;
}
