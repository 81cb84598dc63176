/** Shared helpers of the simweb tests: DNS through the simulated server, HTTP via undici, parse5 links. */
import { Resolver } from 'node:dns/promises';
import { Agent, request } from 'undici';
import { parse } from 'parse5';
import type { Simweb } from '../../src/simweb/index.js';

export function resolverFor(sw: Simweb, timeout = 2000): Resolver {
  const r = new Resolver({ timeout, tries: 1 });
  r.setServers([sw.dnsServer]);
  return r;
}

export interface Fetched { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer; ip: string; }

/**
 * Resolve the URL's host through simweb's DNS, then GET it with undici from that IP (Host header
 * set), as a crawler does. Bodies are returned as transferred (no content decoding).
 */
export async function simFetch(sw: Simweb, url: string, opts: { dispatcher?: Agent; headersTimeout?: number; userAgent?: string; maxBytes?: number; method?: 'GET' | 'HEAD' } = {}): Promise<Fetched> {
  const u = new URL(url);
  const [ip] = await resolverFor(sw).resolve4(u.hostname);
  const res = await request(`http://${ip}:${u.port}${u.pathname}${u.search}`, {
    method: opts.method ?? 'GET',
    headers: { host: u.host, 'user-agent': opts.userAgent ?? 'drumcrawl-test/1.0 (+http://example.test/bot)' },
    dispatcher: opts.dispatcher,
    headersTimeout: opts.headersTimeout ?? 5000,
    bodyTimeout: 10000,
  });
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body) {
    chunks.push(c as Buffer);
    n += (c as Buffer).length;
    if (opts.maxBytes !== undefined && n >= opts.maxBytes) { res.body.destroy(); break; }
  }
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), ip: ip! };
}

interface P5Node { nodeName: string; tagName?: string; attrs?: { name: string; value: string }[]; childNodes?: P5Node[]; content?: P5Node; }

/** Links (a/area href, frame/iframe src, link href) and base href, in document order, via parse5. */
export function parse5Links(html: string): { base: string | null; links: string[] } {
  const doc = parse(html) as unknown as P5Node;
  const links: string[] = [];
  let base: string | null = null;
  const walk = (n: P5Node) => {
    const attr = (name: string) => n.attrs?.find((a) => a.name === name)?.value;
    switch (n.tagName) {
      case 'a': case 'area': case 'link': { const v = attr('href'); if (v !== undefined) links.push(v); break; }
      case 'frame': case 'iframe': { const v = attr('src'); if (v !== undefined) links.push(v); break; }
      case 'base': { const v = attr('href'); if (v !== undefined && base === null) base = v; break; }
      default: break; // other elements carry no link the model counts
    }
    for (const c of n.childNodes ?? []) walk(c);
    if (n.content) walk(n.content);
  };
  walk(doc);
  return { base, links };
}

/** Browser-like resolution and the canonical form simweb's ground truth counts (no fragment, lower-case host). */
export function resolveCanonical(href: string, pageUrl: string, base: string | null): string {
  const b = base === null ? pageUrl : new URL(base, pageUrl).href;
  const u = new URL(href, b);
  u.hash = '';
  return u.href;
}
