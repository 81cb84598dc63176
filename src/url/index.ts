/**
 * src/url — URL canonicalization, link resolution, pay-level domains, 64-bit keys, trap heuristics.
 *
 * Data flow: html extracts raw link values → a LinkResolver per page (base = page URL or
 * `<base href>`) resolves + canonicalizes each (fast string path, WHATWG fallback) → the crawler
 * takes urlFingerprint/fingerprintInto (URLseen key), hostOf + hostKeyInto (politeness),
 * registrableDomain/pldKeyInto (STAR budgets), trapCheck (frontier filter).
 *
 * API: the functions below, plus LinkResolver (hot-path object), canonicalizeUrlReference (the
 * WHATWG-only reference), hostKeyInto / pldKeyInto / splitKey, pldOrHost, portOf / urlOriginOf /
 * urlPathAndQueryOf, DEFAULT_SESSION_ID_PARAMS, DEFAULT_TRAP_LIMITS. Rules and reasons: docs/url.md.
 */
export type { UrlRejectReason, CanonicalizeOptions } from './options.js';
export { DEFAULT_SESSION_ID_PARAMS, DEFAULT_MAX_URL_LENGTH } from './options.js';
export type { Detailed as CanonicalizeResult } from './normalize.js';
export { LinkResolver } from './resolver.js';
export { canonicalizeUrl, canonicalizeUrlDetailed, canonicalizeUrlReference } from './canonicalize-url.js';
export { registrableDomain, pldOrHost, PSL_RULE_COUNTS, type RegistrableDomainOptions } from './pld.js';
export { urlFingerprint, fingerprint64, fingerprintInto, fingerprintManyInto, fingerprintRunsInto, hostKeyInto, pldKeyInto, splitKey, fingerprint64Reference, NATIVE_FINGERPRINT } from './fingerprint.js';
export { hostOf, portOf, urlOriginOf, urlPathAndQueryOf, unpinned } from './host.js';
export { trapCheck, DEFAULT_TRAP_LIMITS, type TrapLimits, type TrapReason } from './traps.js';
