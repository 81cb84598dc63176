/**
 * The authority a robots.txt governs. RFC 9309 §2.3: the rules are in `/robots.txt` at the
 * top-level path of the service, and "the rules apply only to the host, protocol, and port number"
 * the file was fetched from (§2.3, §3 of the RFC). So `http://a.example/`, `http://a.example:8080/`
 * and `https://a.example/` are three services with three robots.txt files, and a URL is judged by
 * the file of its own scheme, host and port.
 *
 * `robotsAuthorityOf(url)` is that service as one string, `scheme://host[:port]`: scheme and host
 * lower case, the host in its ASCII (IDNA, punycode) form, an IPv6 literal compressed in brackets,
 * no userinfo, and the scheme's default port dropped (`http://a:80/` and `http://a/` are one
 * authority, `https://a:443/` and `https://a/` another). It is also the origin the robots.txt URL
 * is made from (`<authority>/robots.txt`), and its XXH64 (src/url fingerprintInto) is the key of
 * the robots DRUMs (RobotsCache, RobotsRequested, src/robots; src/crawl/ports/robots-stage.ts).
 * Here in src/util, with no import, so that the frontier's robots gate can use it.
 *
 * Cost: a canonical URL (src/url canonicalization: lower case, punycode, default port dropped, as
 * every URL the frontier holds) takes the fast path — one scan of the authority, one slice; any
 * other form (upper case, non-ASCII, an IPv6 literal, a written default port, a port with leading
 * zeros) goes through the WHATWG parser, which normalizes all of them.
 */
const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443', ws: '80', wss: '443', ftp: '21' };

/** The robots.txt authority of an absolute URL (see the top comment); null when it has none. */
export function robotsAuthorityOf(url: string): string | null {
  const s = url.indexOf('://');
  if (s <= 0) return null;
  let end = s + 3;
  const n = url.length;
  while (end < n) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */ || c === 92 /* \ */) break;
    end++;
  }
  let start = s + 3;
  const at = url.lastIndexOf('@', end - 1);
  if (at >= start) start = at + 1;
  let fast = start < end;
  let colon = -1;
  for (let p = start; p < end && fast; p++) {
    const c = url.charCodeAt(p);
    if (c === 58 /* : */) {
      if (colon >= 0) fast = false;
      colon = p;
    } else if (colon >= 0) fast = c >= 48 && c <= 57;
    else fast = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95;
  }
  for (let p = 0; p < s && fast; p++) {
    const c = url.charCodeAt(p);
    fast = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
  }
  if (fast && colon >= 0) {
    // port: digits, no leading zero, not the scheme's default, not empty
    fast = colon + 1 < end && url.charCodeAt(colon + 1) !== 48 && url.slice(colon + 1, end) !== DEFAULT_PORT[url.slice(0, s)];
  }
  if (fast) return at >= s + 3 ? url.slice(0, s + 3) + url.slice(start, end) : url.slice(0, end);
  try {
    const u = new URL(url);
    if (u.hostname === '') return null;
    return `${u.protocol.slice(0, -1)}://${u.hostname}${u.port !== '' ? `:${u.port}` : ''}`;
  } catch {
    return null;
  }
}
