/**
 * The page renderer reuses one link plan for every page (src/simweb/model/render.ts): a page must come out
 * the same whatever page was rendered before it, and hold only its own links. A page of 0 or 1
 * links once rendered entries past the plan's end — the previous page's links — so a good page
 * rendered after a farm page linked to the farm, which the ground truth (pageLinks) never saw.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebGraph } from '../../src/simweb/model/graph.js';
import { resolveParams } from '../../src/simweb/model/params.js';
import type { HostInfo } from '../../src/simweb/model/host-model.js';

const bodyOf = (w: WebGraph, info: HostInfo, n: number): string | null => {
  const r = w.renderPage(info, n);
  return r === null ? null : Buffer.concat(r.chunks).toString('latin1');
};

test('a page renders the same after any other page, and links only where its plan does', () => {
  const p = resolveParams('adv-deep');
  const fresh = new WebGraph(p, 1, 8080);
  const w = new WebGraph(p, 1, 8080);
  const good = [...w.hosts()];
  let pages = 0;
  let short = 0;
  for (let i = 0; i < 3000; i++) {
    const farm = w.hostInfo(`h${(i * 7919) % 100_000}.farm0.test`);
    if (farm !== null) bodyOf(w, farm, i * 31);
    const info = good[i % good.length]!;
    const n = (i * 13) % info.pages;
    const body = bodyOf(w, info, n);
    const ref = bodyOf(fresh, fresh.hostInfo(info.name)!, n);
    assert.equal(body, ref, `${info.name}/p/${n} after a farm page`);
    if (body === null) continue;
    pages++;
    const planned = w.pageLinks(info, n).links;
    if (planned.length <= 1) short++;
    if (!planned.some((l) => l.host.includes('.farm'))) assert.ok(!/farm\d+\.test/i.test(body), `${info.name}/p/${n} links to a farm its plan does not hold`);
  }
  assert.ok(pages > 2000 && short > 20, `${pages} pages compared, ${short} of them with at most one link`);
});
