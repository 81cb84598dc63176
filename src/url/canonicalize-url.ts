/**
 * The function API of URL canonicalization (canonicalizeUrl and its detailed and reference forms)
 * over LinkResolver (resolver.ts), which keeps the hot path of one page's links.
 */
import { canonicalizeSlow } from './canonicalize.js';
import type { Detailed } from './normalize.js';
import { compileOptions, type CanonicalizeOptions, type CompiledOptions } from './options.js';
import { LinkResolver, baseParser } from './resolver.js';

// Function API with a small resolver cache, so `canonicalizeUrl(rel, base)` called link by link
// with the same base also takes the fast path. Bound: RESOLVER_CACHE_MAX resolvers per options
// object (each a few short strings); the map is cleared when full.

const RESOLVER_CACHE_MAX = 256;
const resolverCaches = new WeakMap<CompiledOptions, Map<string, LinkResolver>>();

function resolverFor(base: string | undefined, opts: CanonicalizeOptions | undefined): LinkResolver {
  const o = compileOptions(opts);
  if (base === undefined) return baseParser(o, opts);
  let cache = resolverCaches.get(o);
  if (cache === undefined) {
    cache = new Map();
    resolverCaches.set(o, cache);
  }
  let r = cache.get(base);
  if (r === undefined) {
    if (cache.size >= RESOLVER_CACHE_MAX) cache.clear();
    r = new LinkResolver(base, opts);
    cache.set(base, r);
  }
  return r;
}

/**
 * Canonical form of `input` (resolved against `base` like a browser resolves a link), or null.
 * See docs/url.md for every rule and its reason.
 */
export function canonicalizeUrl(input: string, base?: string, opts?: CanonicalizeOptions): string | null {
  return resolverFor(base, opts).resolve(input);
}

/** `canonicalizeUrl` with the reason for a null. */
export function canonicalizeUrlDetailed(input: string, base?: string, opts?: CanonicalizeOptions): Detailed {
  return resolverFor(base, opts).resolveDetailed(input);
}

/** The WHATWG reference path alone (no fast path, no cache): for tests and benchmarks. */
export function canonicalizeUrlReference(input: string, base?: string, opts?: CanonicalizeOptions): Detailed {
  return canonicalizeSlow(input, base, compileOptions(opts));
}
