/**
 * The adversarial presets (src/simweb/model/adversary-presets.ts): each one's good web (ground truth) is
 * the same with and without its adversary, and the adversary is what the preset says — farm hosts
 * on IPs of their own, minted host names, bought in-degree / a clique of farm PLDs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebGraph } from '../../src/simweb/model/graph.js';
import { resolveParams } from '../../src/simweb/model/params.js';
import { ADVERSARY_PRESET_NAMES } from '../../src/simweb/model/adversary-presets.js';

const UA = 'drumcrawl';

test('adversarial presets: the same good web without the adversary; farms on their own IPs', () => {
  for (const name of ADVERSARY_PRESET_NAMES) {
    const p = resolveParams(name);
    const w = new WebGraph(p, 1, 8080);
    const w0 = new WebGraph(resolveParams(name, { spamFarms: 0 }), 1, 8080);
    const good = w.reachable(w.seeds(), { userAgent: UA });
    assert.deepEqual([...good].sort(), [...w0.reachable(w0.seeds(), { userAgent: UA })].sort(), name);
    assert.ok(good.size >= 300, `${name}: ${good.size} good pages`);
    assert.equal(w.ipAddresses().length, p.ips + p.spamIps, name);
    // Every farm is linked from the good web, from home pages.
    let entries = 0;
    for (const h of w.hosts()) if (h.hostIndex === 0) entries += w.pageLinks(h, 0).links.filter((l) => l.host.includes('.farm')).length;
    assert.equal(entries, p.spamFarms * p.spamInLinks, name);
    const farm = w.hostInfo('h123.farm0.test');
    if (p.spamHostsPerFarm === 0) assert.ok(farm !== null && farm.ipIndex >= p.ips, `${name}: farm host on the farm's IPs`);
    else assert.equal(farm, null, `${name}: only ${p.spamHostsPerFarm} hosts per farm`);
  }
});

test('adv-mint mints hosts; adv-bought and adv-clique farms link to each other', () => {
  const mint = new WebGraph(resolveParams('adv-mint'), 1, 8080);
  const page = mint.pageLinks(mint.hostInfo('h5.farm0.test')!, 17).links;
  assert.equal(page.length, 20);
  assert.ok(new Set(page.map((l) => l.host)).size >= 18, 'links go to (almost) all different hosts');
  for (const name of ['adv-bought', 'adv-clique'] as const) {
    const w = new WebGraph(resolveParams(name), 1, 8080);
    const linkedFarms = new Set<string>();
    for (let n = 0; n < 50; n++) {
      for (const l of w.pageLinks(w.hostInfo('www.farm0.test')!, n).links) {
        const m = /^www\.(farm\d+)\.test$/.exec(l.host);
        if (m && m[1] !== 'farm0') linkedFarms.add(m[1]!);
      }
    }
    assert.ok(linkedFarms.size >= Math.min(5, w.params.spamFarms - 1), `${name}: farm0 links to ${linkedFarms.size} other farms`);
  }
});

test('the good web of every preset is the issue\'s: each HTML page links to the home pages of the next two PLDs', () => {
  for (const name of ADVERSARY_PRESET_NAMES) {
    const w = new WebGraph(resolveParams(name), 1, 8080);
    const plds = w.params.plds;
    let html = 0;
    for (const h of w.hosts()) {
      if (h.farm >= 0) continue;
      for (let n = 0; n < Math.min(10, w.pageCount(h.pldIndex, h.hostIndex)); n++) {
        if (w.pageKind(h, n) !== 'html') continue;
        html++;
        const links = new Set(w.pageLinks(h, n).links.map((l) => `${l.host}${l.path}`));
        for (const r of [1, 2]) assert.ok(links.has(`www.pld${(h.pldIndex + r) % plds}.test/p/0`), `${name}: ${h.name}/p/${n} links to pld${(h.pldIndex + r) % plds}`);
      }
    }
    assert.ok(html >= 5 * plds, `${name}: ${html} HTML pages checked`);
  }
  // ringLinks 0 (simweb's default): the same page without those two links.
  const linksOf = (ringLinks?: number): string[] => {
    const w = new WebGraph(resolveParams('adv-mint', ringLinks === undefined ? {} : { ringLinks }), 1, 8080);
    return w.pageLinks(w.hostInfo('www.pld3.test')!, 5).links.map((l) => `${l.host}${l.path}`);
  };
  assert.deepEqual(linksOf().sort(), [...linksOf(0), 'www.pld4.test/p/0', 'www.pld5.test/p/0'].sort());
});
