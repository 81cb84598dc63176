/**
 * The reference ("slow") canonicalizer: WHATWG parsing with Node's `URL`, then the string steps of
 * normalize.ts. Every input the fast path (resolver.ts) does not handle comes here, and the fast
 * path is property-tested to equal this function (test/url/fastpath.test.ts).
 */
import { finish, hostFitsDns, reject, removeDotSegments, type Detailed } from './normalize.js';
import type { CompiledOptions } from './options.js';

function tryParse(input: string, base?: string): URL | null {
  try {
    return base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return null;
  }
}

/** True when WHATWG's preprocessing (trim C0 controls and spaces, drop tab/LF/CR) leaves nothing. */
export function isBlankUrlInput(input: string): boolean {
  for (let i = 0; i < input.length; i++) if (input.charCodeAt(i) > 0x20) return false;
  return true;
}

/** WHATWG path (`URL#pathname`) of the last URL canonicalizeSlow parsed as http(s) with a host. */
let lastPath = '';

/**
 * `new URL(input, base).pathname` of the last canonicalizeSlow call that got as far as the path
 * (every call with a non-null url did): LinkResolver's constructor needs the base's raw path and
 * so does not parse the base a second time. For http(s) URLs the href's path between the
 * authority and '?' is exactly `pathname` ('/' and '?' cannot occur unescaped before it).
 */
export function lastWhatwgPath(): string {
  return lastPath;
}

/**
 * WHATWG parse of `input` against `base`, then canonicalization. An unparseable `base` is treated as
 * absent (an absolute `input` still canonicalizes), because a link's own absolute URL does not
 * depend on a broken page base.
 */
export function canonicalizeSlow(input: string, base: string | undefined, o: CompiledOptions): Detailed {
  // Cheap guard before parsing: WHATWG parsing can only shrink an input by dropping whitespace,
  // dot segments and the fragment, so anything 8x the limit is refused unparsed (DoS bound).
  if (input.length > o.maxLength * 8) return reject('too-long');
  let u = base === undefined ? tryParse(input) : tryParse(input, base);
  if (u === null && base !== undefined && tryParse(base) === null) u = tryParse(input);
  if (u === null) return reject(isBlankUrlInput(input) ? 'empty' : 'unparseable');
  const proto = u.protocol;
  if (proto !== 'http:' && proto !== 'https:') return reject('scheme');
  const host = u.hostname;
  if (host.length === 0) return reject('host');
  if (host.charCodeAt(0) !== 91 /* [ */ && !hostFitsDns(host)) return reject('host');
  let h = u.href;
  const hash = h.indexOf('#'); // '#' cannot occur earlier: WHATWG percent-encodes it elsewhere
  if (hash >= 0) h = h.slice(0, hash);
  const pathStart = h.indexOf('/', proto.length + 2);
  const q = h.indexOf('?', pathStart);
  // removeDotSegments is a no-op on a correct WHATWG path; it fixes a Node 20 (ada) bug that leaves
  // dot segments after an empty segment followed by a dot-led one, or after any dot-led segment that
  // is not itself a dot segment, unresolved (`http://h/a//.b/..` and `http://h/a/.a/.` stay as is;
  // the Standard gives `/a//` and `/a/.a/`).
  const whatwgPath = q < 0 ? h.slice(pathStart) : h.slice(pathStart, q);
  lastPath = whatwgPath;
  const path = removeDotSegments(whatwgPath);
  const url = finish(h.slice(0, pathStart), path, q < 0 ? null : h.slice(q + 1), o);
  return url === null ? reject('too-long') : { url };
}
