/**
 * src/fetch — the HTTP fetcher (undici, keep-alive to the resolved IP, hard time and size caps,
 * redirects returned, outcomes classified) and the outcome policy table (docs/errors.md).
 *
 * API: Fetcher and FetcherOptions (see fetcher.ts: headers, acceptEncoding,
 * maxHeaderBytes, connectionsPerPool, maxPools, keepAliveTimeoutMs, isAddressAllowed,
 * tlsRejectUnauthorized, dns, and the wire gate's minIpIntervalMs / minHostIntervalMs); FetchRequest
 * also takes method, maxBodyBytes, acceptContentTypes, robots (spaced per IP only) and an optional
 * ip (resolved through `dns` when absent); FetchResult also carries errorCode, rawHeaders,
 * contentEncoding; Fetcher.stats() (incl. `gated`: requests waiting in the wire gate).
 * The policy entry is
 * `{ retry, maxRetries, backoffMs, backoffFactor, hostPenaltyMs, description }` (the contract's
 * `hostPenalty`, with its unit in the name). Outcome code type: FetchOutcomeCode (the frontier
 * exports a `FetchOutcome`). isHttpResponse(r): a complete response arrived (archive it).
 * The network guard: addressGuard / specialAddress (address-guard.ts), Fetcher.refuseEndpoint and
 * Fetcher.refusal; `allowedNetworks` admits special-purpose ranges (public addresses always pass).
 * The robots.txt fetch (robots-fetch.ts): fetchRobots(fetcher, host, ip, port, userAgent, opts?)
 * with opts scheme, maxRedirects, dns, cacheTtlMs, minTtlMs, unreachableRetryMs, previous, maxBytes,
 * now, beforeRequest (awaited before every hop, with the hop's IP); its result also has `redirects`
 * and `sitemaps`; the rules come from src/robots.
 */
export {
  Fetcher, classifyFetchError, isHttpResponse, type FetcherOptions, type FetchRequest, type FetchResult,
} from './fetcher.js';
export {
  OUTCOME_POLICY, FETCH_OUTCOMES, ROBOTS_OUTCOMES, outcomePolicy, retryDelayMs, renderOutcomePolicyTable, type OutcomePolicy, type FetchOutcomeCode,
} from './error-policy.js';
export {
  LOOPBACK_NETWORKS, networkPredicate, parseRetryAfter, parseContentType, decodeContent, MAX_RETRY_AFTER_MS, type DecodeResult,
} from './limits.js';
export { addressGuard, specialAddress, embeddedIpv4, SPECIAL_IPV4, SPECIAL_IPV6 } from './address-guard.js';
export { fetchRobots, robotsUrl, type FetchRobotsOptions, type RobotsFetchOutcome } from './robots-fetch.js';
