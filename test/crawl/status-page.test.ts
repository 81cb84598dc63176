/**
 * The live status page in headless Chromium against a running crawl of simweb (real sockets: the
 * crawler, its status server, simweb in a child process, Chromium over the DevTools protocol on a
 * pipe): the page shows the numbers GET /status gives, draws the rate charts, takes the token from
 * the URL fragment without ever sending it in a URL, and its buttons pause, resume and stop the
 * crawl only with the right token. A screenshot is taken; with DRUMCRAWL_SCREENSHOT=<file> it is
 * written there (docs/status-page.png is made so).
 *
 * Needs Chromium (Debian: `apt-get install -y chromium`; .ci/run installs it): without it the test
 * fails with that message.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveCrawlConfig } from '../../src/config/config.js';
import { Crawler } from '../../src/crawl/pipeline.js';
import type { StatusSnapshot } from '../../src/monitor/stats.js';
import { crawlSettings, forkSimweb, tempDir, type SimwebChild } from '../e2e/harness.js';
import { launchChromium, type Browser, type Page } from './cdp-pipe.js';

let browser: Browser | undefined;
let web: SimwebChild | undefined;
let crawler: Crawler | undefined;
let running: Promise<unknown> | undefined;
let dir: string | undefined;
after(async () => {
  crawler?.stop('test-end');
  crawler?.stop('test-end'); // a second stop hurries the drain
  // The crawl's files are removed only once it has ended (bounded wait).
  await Promise.race([running?.catch(() => undefined), new Promise((r) => setTimeout(r, 30_000).unref())]);
  await browser?.close();
  await web?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Fields shown with data-k that do not move while the crawl is paused and drained. */
const STILL = ['pages', 'pagesOk', 'bytes', 'urlsSeen', 'urlsDiscovered', 'duplicates', 'robotsFetches', 'checkpoints',
  'urlsQueued', 'beast.j', 'beast.qfSize', 'beast.qrSize', 'inFlight', 'parsing'];

function field(s: StatusSnapshot, k: string): unknown {
  return k.split('.').reduce<unknown>((x, p) => (x as Record<string, unknown>)[p], s);
}

async function status(url: string): Promise<StatusSnapshot> {
  return (await (await fetch(`${url}/status`)).json()) as StatusSnapshot;
}

/** What the page shows: every data-k element's text as a number (or string), the tables' rows. */
function readPage(page: Page): Promise<{ values: Record<string, string>; outcomes: [string, string][]; plds: string[][]; updated: number }> {
  return page.eval(`(() => {
    const values = {};
    for (const el of document.querySelectorAll('[data-k]')) values[el.dataset.k] = el.textContent;
    const rows = (id) => [...document.querySelectorAll('#' + id + ' tr')].map((tr) => [...tr.children].map((td) => td.textContent));
    return { values, outcomes: rows('outcomes'), plds: rows('plds'), updated: Number(document.body.dataset.updated || 0) };
  })()`);
}

const num = (text: string): number => Number(text.replace(/,/g, ''));

/** Poll `cond` every 100 ms; `ms` bounds a hang (far above a loaded box's times), not a speed. */
async function until(what: string, cond: () => Promise<boolean>, ms = 300_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('status page in headless Chromium: numbers match GET /status, chart drawn, token from the fragment, buttons steer', { timeout: 1_800_000 }, async (t) => {
  browser = launchChromium();
  web = await forkSimweb('demo');
  dir = await tempDir('status-page');
  crawler = await Crawler.open(resolveCrawlConfig(crawlSettings(web, {
    // No time limit: the page's Stop button ends the crawl (the demo web does not run dry first).
    stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'warc'), statusPort: 0,
    hostDelayMs: 150, minHostDelayMs: 100, ipDelayMs: 20, minIpDelayMs: 10, workers: 1, ramBytes: 256 * 2 ** 20, fetchTimeoutMs: 5000,
  })));
  const started = new Promise<{ url: string; token: string }>((resolve) => crawler!.once('status-server', (url: string, token: string) => resolve({ url, token })));
  const run = crawler.run();
  running = run;
  const { url, token } = await started;
  await until('40 pages fetched', async () => (await status(url)).pages >= 40);

  const page = await browser.newPage(1280, 1500);
  const requested: string[] = [];
  browser.on('Network.requestWillBeSent', (p) => requested.push((p.request as { url: string }).url));
  await page.send('Network.enable');
  let dialogs = 0;
  browser.on('Page.javascriptDialogOpening', () => {
    dialogs++;
    void page.send('Page.handleJavaScriptDialog', { accept: true });
  });
  await page.goto(`${url}/#token=${token}`);

  // The token: taken from the fragment, kept in the field, the fragment gone from the address bar.
  assert.equal(await page.eval<string>('location.hash'), '');
  assert.equal(await page.eval<string>("document.getElementById('token').value"), token);

  // Running: numbers shown and the charts drawn from at least 3 history samples (fine ring: every 2 s).
  await page.waitFor("document.querySelector('[data-k=state]').dataset.v === 'running'");
  await page.waitFor("[...document.querySelectorAll('#chart-pages polyline[data-series=pages]')].some((p) => p.getAttribute('points').split(' ').length >= 2)");
  // The soak's series (bench:soak): CPU per page, memory against --ram, pauses, pages/s by URLseen's size.
  for (const [id, series] of [['chart-rss', 'rss'], ['chart-rss', 'ram'], ['chart-rss', 'heap'], ['chart-pauses', 'loop'], ['chart-pauses', 'checkpoint'], ['chart-urlseen', 'pages-by-seen']]) {
    await page.waitFor(`[...document.querySelectorAll('#${id} polyline[data-series=${series}]')].some((p) => p.getAttribute('points').split(' ').length >= 2)`);
  }
  await page.waitFor("document.querySelectorAll('#chart-cpu polyline[data-series=cpu]').length === 1");
  await page.waitFor("document.querySelectorAll('#plds tr').length > 0 && document.querySelectorAll('#outcomes tr').length > 0");
  const shot = await page.screenshot();
  assert.deepEqual([...shot.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  assert.ok(shot.length > 20_000, `a screenshot with content (${shot.length} bytes)`);
  const shotFile = process.env.DRUMCRAWL_SCREENSHOT ?? path.join(dir, 'status-page.png');
  await writeFile(shotFile, shot);
  t.diagnostic(`screenshot ${shotFile} (${shot.length} bytes)`);

  // Pause with the button; once drained, every still number on the page equals GET /status.
  await page.eval("document.getElementById('pause').click()");
  await page.waitFor("document.getElementById('msg').dataset.result === 'ok'");
  assert.equal((await status(url)).state, 'paused');
  await until('drained', async () => { const s = await status(url); return s.inFlight === 0 && s.parsing === 0; });
  let compared = false;
  for (let attempt = 0; attempt < 20 && !compared; attempt++) {
    const before = await status(url);
    const t0 = Date.now();
    await page.waitFor(`Number(document.body.dataset.updated) > ${t0}`);
    const shown = await readPage(page);
    const after = await status(url);
    if (STILL.some((k) => field(before, k) !== field(after, k))) continue; // still moving: read again
    for (const k of STILL) assert.equal(num(shown.values[k]!), field(after, k), `page shows ${k}`);
    assert.match(shown.values.state!, /^paused/);
    const outcomes = Object.entries(after.outcomes).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    assert.deepEqual(shown.outcomes.map(([k, n]) => [k, num(n!)]), outcomes, 'outcomes by code');
    assert.deepEqual(shown.plds.map(([p, n, b, a]) => [p, num(n!.replace('≤ ', '')), num(b!), num(a!)]),
      after.topPlds.map((r) => [r.pld, r.pages, r.budget, r.admitted]), 'top PLDs');
    assert.ok(after.topPlds.length >= 2, `several PLDs crawled (${after.topPlds.length})`);
    // The snapshot lists the top 20 PLDs: with fewer, the rows are every PLD and add up exactly.
    const rowPages = after.topPlds.reduce((n, r) => n + r.pages, 0);
    if (after.topPlds.length < 20) assert.equal(rowPages, after.pages, 'the PLD rows account for every page (fewer PLDs than counters: exact)');
    else assert.ok(rowPages <= after.pages, `the top 20 PLD rows hold at most every page (${rowPages} ≤ ${after.pages})`);
    compared = true;
  }
  assert.ok(compared, 'the paused crawl held still long enough to compare');

  // A wrong token is refused and steers nothing; the right one resumes.
  await page.eval(`(() => { const i = document.getElementById('token'); i.value = '${'A'.repeat(43)}'; i.dispatchEvent(new Event('input')); })()`);
  await page.eval("document.getElementById('resume').click()");
  await page.waitFor("document.getElementById('msg').dataset.result === 'CRAWL_CONTROL_UNAUTHORIZED'");
  assert.equal((await status(url)).state, 'paused');
  await page.eval(`(() => { const i = document.getElementById('token'); i.value = '${token}'; i.dispatchEvent(new Event('input')); })()`);
  await page.eval("document.getElementById('msg').dataset.result = ''; document.getElementById('resume').click()");
  await page.waitFor("document.getElementById('msg').dataset.result === 'ok'");
  assert.equal((await status(url)).state, 'running');

  // Stop asks for confirmation (accepted here), then the crawl ends with the status server's reason.
  await page.eval("document.getElementById('msg').dataset.result = ''; document.getElementById('stop').click()");
  await page.waitFor("document.getElementById('msg').dataset.result === 'ok'");
  assert.equal(dialogs, 1, 'Stop asked before stopping');
  const summary = await run;
  crawler = undefined;
  assert.equal(summary.stopReason, 'status-server');

  // The token never appeared in a URL the browser requested (so in no request line or log).
  assert.ok(requested.some((u) => u.endsWith('/status')), `the page polled /status (${requested.length} requests seen)`);
  assert.deepEqual(requested.filter((u) => u.includes(token)), []);
});
