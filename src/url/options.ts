/**
 * Canonicalization options, validated and compiled once (piscina-style: one place for defaults,
 * precise messages for bad fields). A compiled options object is what the hot path carries.
 */
import { CrawlError } from '../errors.js';

/** Why `canonicalizeUrlDetailed` refused an input (stable strings; see docs/url.md). */
export type UrlRejectReason = 'unparseable' | 'scheme' | 'too-long' | 'empty' | 'host';

export interface CanonicalizeOptions {
  /** Longest canonical URL accepted, in UTF-16 code units (= bytes: canonical URLs are ASCII). @default 2048 */
  maxLength?: number;
  /** Remove session-id path parameters and query parameters (CRO-GRID's defence). @default false */
  stripSessionIds?: boolean;
  /**
   * Names of session-id parameters, matched case-insensitively; a trailing `*` matches any suffix
   * (Classic ASP's cookie is `ASPSESSIONID` + 8 random letters). @default DEFAULT_SESSION_ID_PARAMS
   */
  sessionIdParams?: readonly string[];
}

/**
 * Session-id parameter names seen in crawls (the list of urlcanon's "aggressive" profile and of
 * Heritrix' `StripSessionIDs`/`StripSessionCFIDs`): Java servlets, PHP, generic, Classic ASP,
 * ColdFusion.
 */
export const DEFAULT_SESSION_ID_PARAMS: readonly string[] = Object.freeze([
  'jsessionid', 'phpsessid', 'sid', 'aspsessionid*', 'cfid', 'cftoken',
]);

export const DEFAULT_MAX_URL_LENGTH = 2048;

/** Options after validation; the regular expressions are built once per options object. */
export interface CompiledOptions {
  readonly maxLength: number;
  readonly strip: boolean;
  /** `;name=value` path parameters to delete (global, case-insensitive). */
  readonly pathParamRe: RegExp | null;
  /** Whole query pair names to delete: exact (lower-cased) names and prefixes. */
  readonly queryNames: ReadonlySet<string>;
  readonly queryPrefixes: readonly string[];
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compile(opts: CanonicalizeOptions | undefined): CompiledOptions {
  const maxLength = opts?.maxLength ?? DEFAULT_MAX_URL_LENGTH;
  if (!Number.isInteger(maxLength) || maxLength < 16) {
    throw new CrawlError('CRAWL_URL_BAD_OPTION', 'options.maxLength must be an integer >= 16', { details: { maxLength } });
  }
  const strip = opts?.stripSessionIds ?? false;
  const names = opts?.sessionIdParams ?? DEFAULT_SESSION_ID_PARAMS;
  const queryNames = new Set<string>();
  const queryPrefixes: string[] = [];
  const alts: string[] = [];
  for (const raw of names) {
    if (typeof raw !== 'string' || raw.length === 0 || /[;=&/?#\s]/.test(raw)) {
      throw new CrawlError('CRAWL_URL_BAD_OPTION', 'options.sessionIdParams must be non-empty names without ;=&/?# or spaces', { details: { name: raw } });
    }
    const name = raw.toLowerCase();
    if (name.endsWith('*')) {
      queryPrefixes.push(name.slice(0, -1));
      alts.push(escapeRe(name.slice(0, -1)) + '[^;/=]*');
    } else {
      queryNames.add(name);
      alts.push(escapeRe(name));
    }
  }
  const pathParamRe = strip && alts.length > 0 ? new RegExp(';(?:' + alts.join('|') + ')=[^;/]*', 'gi') : null;
  return { maxLength, strip, pathParamRe, queryNames, queryPrefixes };
}

export const DEFAULT_COMPILED: CompiledOptions = compile(undefined);
const compiledCache = new WeakMap<CanonicalizeOptions, CompiledOptions>();

/** Compiled form of `opts`, memoized per options object (callers usually keep one for the crawl). */
export function compileOptions(opts: CanonicalizeOptions | undefined): CompiledOptions {
  if (opts === undefined) return DEFAULT_COMPILED;
  let c = compiledCache.get(opts);
  if (c === undefined) {
    c = compile(opts);
    compiledCache.set(opts, c);
  }
  return c;
}
