/** Test helpers for the URL tests: the conformance fixtures (test/fixtures/conformance/) and our canonicalization steps. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CONFORMANCE = path.resolve(REPO_ROOT, 'test/fixtures/conformance');

export function loadJson<T = unknown>(rel: string): T {
  return JSON.parse(readFileSync(path.join(CONFORMANCE, rel), 'utf8')) as T;
}

/**
 * Our documented canonicalization steps (docs/url.md) applied to a WHATWG href, written
 * independently of src/url/normalize.ts (regex-based) so the conformance test cross-checks it:
 * drop the fragment, drop an empty query, upper-case percent-escape hex and decode escapes of
 * unreserved characters (unless the component holds a stray '%').
 */
export function applyOurSteps(href: string): string {
  const noFrag = href.split('#')[0]!;
  const m = /^(https?:\/\/[^/]*)(\/[^?]*)(?:\?(.*))?$/.exec(noFrag);
  if (!m) throw new Error('not an http(s) href: ' + href);
  const norm = (s: string): string => {
    if (/%(?![0-9A-Fa-f]{2})/.test(s)) return s.replace(/%[0-9a-fA-F]{2}/g, (e) => e.toUpperCase());
    return s.replace(/%([0-9a-fA-F]{2})/g, (e, h: string) => {
      const ch = String.fromCharCode(parseInt(h, 16));
      return /[A-Za-z0-9\-._~]/.test(ch) ? ch : e.toUpperCase();
    });
  };
  const query = m[3] === undefined || m[3] === '' ? '' : '?' + norm(m[3]);
  return m[1]! + norm(m[2]!) + query;
}
