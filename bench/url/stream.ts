/**
 * The URL bench's link stream (bench/url/run.ts and bench/url/ab.ts measure the same one): pages
 * with a base URL on ~200 hosts and 59 links each, mostly relative (the mix the crawler sees),
 * some absolute, protocol-relative, fragments, non-http schemes and hard cases (escapes, non-ASCII,
 * padding, dot segments). Deterministic (mulberry32), so every run measures the same stream.
 */
import { mulberry32 } from '../../src/simweb/model/hash.js';

export const LINKS_PER_PAGE = 59;

export interface BenchPage {
  base: string;
  links: string[];
}

/**
 * `pages` pages of `LINKS_PER_PAGE` links. By default the link values are slices of the page's
 * text, as src/html's extractor hands them over (V8 sliced strings over one flat string), not
 * freshly concatenated (cons) strings, which the string built-ins (search, indexOf, startsWith,
 * charCodeAt, TextEncoder) treat differently; `consLinks` keeps the concatenated strings.
 */
export function makeStream(pages: number, consLinks = false): BenchPage[] {
  const rnd = mulberry32(0x5eed1234);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const int = (n: number): number => Math.floor(rnd() * n);
  const WORDS = ['news', 'products', 'blog', 'about', 'contact', 'category', 'item', 'search', 'archive', 'tag', 'user', 'help', 'docs', 'static', 'img'];
  const HOSTS = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? 'www' : 'h' + i) + '.pld' + (i % 100) + '.test');
  const seg = (): string => pick(WORDS) + (rnd() < 0.5 ? '-' + int(500) : '');
  const file = (): string => seg() + pick(['.html', '.html', '.php', '/', '.aspx', '']);
  const query = (): string => '?' + pick(['id', 'page', 'q', 'sort', 'ref']) + '=' + int(1000) + (rnd() < 0.3 ? '&lang=en' : '');

  function makeBase(): string {
    const host = pick(HOSTS);
    const depth = 1 + int(3);
    let p = '';
    for (let i = 0; i < depth; i++) p += '/' + seg();
    return (rnd() < 0.3 ? 'https://' : 'http://') + host + p + '/' + file() + (rnd() < 0.2 ? query() : '');
  }

  function makeLink(baseHost: string): string {
    const r = rnd();
    if (r < 0.45) {
      const up = rnd() < 0.3 ? '../'.repeat(1 + int(2)) : rnd() < 0.1 ? './' : '';
      return up + (rnd() < 0.4 ? seg() + '/' : '') + file() + (rnd() < 0.15 ? query() : '');
    }
    if (r < 0.70) return '/' + seg() + '/' + file() + (rnd() < 0.33 ? query() : '');
    if (r < 0.82) return 'http://' + baseHost + '/' + seg() + '/' + file();
    if (r < 0.90) return (rnd() < 0.3 ? '//' : pick(['http://', 'https://'])) + pick(HOSTS) + '/' + file();
    if (r < 0.94) return rnd() < 0.6 ? '#' + seg() : query();
    if (r < 0.97) return pick(['mailto:info@' + baseHost, 'javascript:void(0)', 'javascript:history.back()', 'tel:+15550100']);
    return pick([
      '/' + seg() + '/caf%C3%A9 menu.html',
      'Ünïcode/' + file(),
      'HTTP://' + baseHost.toUpperCase() + '/' + file(),
      '/a/%2e%2e/' + file(),
      '/search?q=' + seg() + '%20' + seg(),
      ' ' + file() + ' ',
      '/%7Euser/' + file(),
    ]);
  }

  const out: BenchPage[] = [];
  for (let i = 0; i < pages; i++) {
    const base = makeBase();
    const baseHost = new URL(base).hostname;
    let links: string[] = [];
    for (let k = 0; k < LINKS_PER_PAGE; k++) links.push(makeLink(baseHost));
    if (!consLinks) {
      const html = links.map((l) => '<a href="' + l + '">x</a>').join('\n');
      html.indexOf('\u0001'); // flattens the page text once, as decoding a fetched body yields a flat string
      let at = 0;
      links = links.map((l) => {
        const start = html.indexOf('<a href="', at) + 9;
        at = start + l.length;
        return html.slice(start, at);
      });
    }
    out.push({ base, links });
  }
  return out;
}
