/**
 * A sample of simweb pages (src/simweb, deterministic) for the link-extraction test and bench:
 * HTML and frameset pages rendered by the generator without servers, with their Content-Type and
 * the generator's ground-truth links.
 */
import { WebGraph, resolveParams, type SimwebPreset, type HostInfo } from '../../src/simweb/index.js';

export interface SimPage { url: string; contentType: string; bytes: Uint8Array; kind: string; info: HostInfo; n: number;
  truth: { tags: number[] } }

/** Up to `max` pages (and at most `maxBytes` bytes), walking PLDs, hosts and pages in order with a stride. */
export function simwebPages(preset: SimwebPreset, seed: number, max: number, maxBytes = Infinity, stride = 7, perHost = Infinity): SimPage[] {
  const web = new WebGraph(resolveParams(preset), seed, 8080);
  const out: SimPage[] = [];
  let bytes = 0;
  for (let pld = 0; pld < web.params.plds && out.length < max && bytes < maxBytes; pld++) {
    for (let j = 0; j < web.hostCount(pld) && out.length < max; j++) {
      const info = web.hostInfo(web.hostName(pld, j));
      if (info === null) continue;
      let taken = 0;
      for (let n = pld % stride; n < Math.min(info.pages, 2000) && out.length < max && bytes < maxBytes && taken < perHost; n += stride) {
        const kind = web.pageKind(info, n);
        if (kind !== 'html' && kind !== 'frameset') continue;
        const r = web.renderPage(info, n);
        if (r === null) continue;
        const b = Buffer.concat(r.chunks);
        bytes += b.length;
        taken++;
        out.push({ url: `${web.origin(info.name)}/p/${n}`, contentType: r.contentType, bytes: b, kind, info, n,
          truth: { tags: web.pageLinks(info, n).tags } });
      }
    }
  }
  return out;
}

export function charsetOf(contentType: string): string | undefined {
  return /charset=([^;\s]+)/i.exec(contentType)?.[1];
}
