/**
 * The live status page the status server serves at GET / (status-server.ts): one self-contained
 * HTML document — inline CSS, inline script, charts drawn as inline SVG — with no external asset,
 * so it works offline and loads nothing but its own server's /status and /history.
 *
 * What it shows (polled once a second): state, progress counters; over the last 30 minutes or 24
 * hours (the samples of GET /history, status-history.ts): pages/s and MB/s, CPU per page, resident
 * memory and the main heap against --ram, the longest URLseen merge, checkpoint and event-loop
 * delay, and pages/s against URLseen's size — the series bench:soak charts; frontier depth (BEAST,
 * QF, QR, RAM, hosts, IPs), the top PLDs by page fetches with their STAR budget, and outcomes by code.
 *
 * Steering: Pause, Resume and Stop send POST /pause, /resume, /stop with
 * `Authorization: Bearer <token>`. The page never sends the token in a URL: it takes it from the
 * URL fragment (`/#token=…`, which browsers do not send to the server, so it appears in no request
 * line or log) or from the token field, keeps it in sessionStorage (this tab only), and removes
 * the fragment from the address bar.
 *
 * Every shown number sits in an element with `data-k="<snapshot field>"` (and the raw value in
 * `data-v`), so that a test can read the page and compare it with GET /status.
 *
 * The document is sent with a Content-Security-Policy that allows only this response's inline
 * script and style (by nonce) and connections to its own origin, and forbids framing.
 */

/** The Content-Security-Policy header of the page: its nonce'd inline script and style, same-origin fetches, no frames. */
export function statusPageCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The page's HTML; `nonce` is fresh per response (base64url, so it needs no escaping). */
export function statusPageHtml(nonce: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>drumcrawl status</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
${BODY}
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}

const STYLE = `
:root { color-scheme: light; --fg: #1d2330; --muted: #667085; --line: #d0d5dd; --card: #f8f9fb; --accent: #2662d9; --bad: #c2410c; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 12px; padding: 12px 20px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 18px; margin: 0 12px 0 0; }
main { padding: 12px 20px 24px; display: grid; gap: 16px; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
section.wide { grid-column: 1 / -1; }
h2 { font-size: 14px; margin: 0 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.state { font-weight: 600; padding: 2px 10px; border-radius: 12px; background: #e0e7ff; }
.state[data-state="running"] { background: #d1fadf; }
.state[data-state="paused"] { background: #fef0c7; }
.state[data-state="stopping"], .state[data-state="stopped"] { background: #fee4e2; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 6px 16px; }
.grid div span:first-child { display: block; color: var(--muted); font-size: 12px; }
.num { font-variant-numeric: tabular-nums; font-size: 18px; font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); }
td.n, th.n { text-align: right; }
tr.err td:first-child { color: var(--bad); }
svg { width: 100%; height: 180px; display: block; }
svg .axis { stroke: var(--line); }
svg text { font-size: 10px; fill: var(--muted); }
.controls { margin-left: auto; display: flex; gap: 6px; align-items: center; }
button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid var(--line); background: #fff; cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
input[type=password] { font: inherit; padding: 3px 6px; width: 16em; }
.legend label { margin-right: 10px; }
#msg { color: var(--muted); min-width: 10em; }
.legend span { margin-right: 12px; }
.legend i { display: inline-block; width: 10px; height: 3px; vertical-align: middle; margin-right: 4px; }
.c-pages { background: #2662d9; } .c-failures { background: #c2410c; } .c-bytes { background: #0e9384; }
.c-cpu { background: #7a5af8; } .c-rss { background: #2662d9; } .c-heap { background: #0e9384; } .c-ram { background: #1d2330; }
.c-merge { background: #2662d9; } .c-checkpoint { background: #c2410c; } .c-loop { background: #667085; }
`;

const BODY = `<header>
<h1>drumcrawl</h1>
<span class="state" id="state" data-k="state">…</span>
<span id="elapsed" data-k="elapsedMs"></span>
<span id="conn"></span>
<div class="controls">
<input id="token" type="password" placeholder="control token" autocomplete="off" aria-label="control token">
<button id="pause" type="button">Pause</button>
<button id="resume" type="button">Resume</button>
<button id="stop" type="button">Stop</button>
<span id="msg" role="status"></span>
</div>
</header>
<main>
<section class="wide"><h2>Progress</h2><div class="grid">
<div><span>pages fetched</span><span class="num" data-k="pages"></span></div>
<div><span>with an HTTP response</span><span class="num" data-k="pagesOk"></span></div>
<div><span>payload bytes</span><span class="num" data-k="bytes"></span></div>
<div><span>pages/s (~10 s)</span><span class="num" data-k="pagesPerSec"></span></div>
<div><span>MB/s (~10 s)</span><span class="num" data-k="mbPerSec"></span></div>
<div><span>unique URLs seen</span><span class="num" data-k="urlsSeen"></span></div>
<div><span>links discovered</span><span class="num" data-k="urlsDiscovered"></span></div>
<div><span>duplicate payloads</span><span class="num" data-k="duplicates"></span></div>
<div><span>robots.txt fetches</span><span class="num" data-k="robotsFetches"></span></div>
<div><span>checkpoints</span><span class="num" data-k="checkpoints"></span></div>
<div><span>resident memory</span><span class="num" data-k="rssBytes"></span></div>
</div></section>
<section class="wide"><h2>Rates over time</h2>
<div class="legend"><label><input type="radio" name="range" value="fine" checked> last 30 min</label>
<label><input type="radio" name="range" value="coarse"> last 24 h</label>
&nbsp; <span><i class="c-pages"></i>pages/s</span><span><i class="c-failures"></i>failures/s</span><span><i class="c-bytes"></i>MB/s</span></div>
<svg id="chart-pages" viewBox="0 0 800 180" preserveAspectRatio="none" role="img" aria-label="pages per second"></svg>
<svg id="chart-bytes" viewBox="0 0 800 180" preserveAspectRatio="none" role="img" aria-label="megabytes per second"></svg>
<div class="legend"><span><i class="c-cpu"></i>CPU ms per page</span></div>
<svg id="chart-cpu" viewBox="0 0 800 180" preserveAspectRatio="none" role="img" aria-label="CPU per page"></svg>
<div class="legend"><span><i class="c-rss"></i>resident memory</span><span><i class="c-heap"></i>main V8 heap</span><span><i class="c-ram"></i>--ram</span></div>
<svg id="chart-rss" viewBox="0 0 800 180" preserveAspectRatio="none" role="img" aria-label="memory against the RAM budget"></svg>
<div class="legend"><span><i class="c-merge"></i>longest URLseen merge</span><span><i class="c-checkpoint"></i>longest checkpoint</span><span><i class="c-loop"></i>longest event-loop delay</span></div>
<svg id="chart-pauses" viewBox="0 0 800 180" preserveAspectRatio="none" role="img" aria-label="merge, checkpoint and event-loop pauses"></svg>
<div class="legend"><span><i class="c-pages"></i>pages/s against URLs seen</span></div>
<svg id="chart-urlseen" viewBox="0 0 800 180" preserveAspectRatio="none" role="img" aria-label="pages per second against URLseen's size"></svg>
</section>
<section><h2>Frontier</h2><div class="grid">
<div><span>URLs queued (all)</span><span class="num" data-k="urlsQueued"></span></div>
<div><span>ready in RAM</span><span class="num" data-k="urlsReady"></span></div>
<div><span>BEAST queues j</span><span class="num" data-k="beast.j"></span></div>
<div><span>QF</span><span class="num" data-k="beast.qfSize"></span></div>
<div><span>QR (await robots)</span><span class="num" data-k="beast.qrSize"></span></div>
<div><span>in flight</span><span class="num" data-k="inFlight"></span></div>
<div><span>parsing</span><span class="num" data-k="parsing"></span></div>
<div><span>hosts active</span><span class="num" data-k="hosts.active"></span></div>
<div><span>hosts waiting</span><span class="num" data-k="hosts.waiting"></span></div>
<div><span>IPs active</span><span class="num" data-k="ips.active"></span></div>
<div><span>IPs waiting</span><span class="num" data-k="ips.waiting"></span></div>
<div><span>DNS hit ratio</span><span class="num" data-k="dns.hitRate"></span></div>
</div></section>
<section><h2>Outcomes by code</h2><table><thead><tr><th>code</th><th class="n">pages</th></tr></thead><tbody id="outcomes"></tbody></table></section>
<section class="wide"><h2>Top PLDs by pages (STAR budget B, largest rank P)</h2>
<table><thead><tr><th>PLD</th><th class="n">pages</th><th class="n">budget B</th><th class="n">max P</th></tr></thead><tbody id="plds"></tbody></table></section>
</main>`;

/*
 * The page's script (plain ES2020, no template literals: it sits inside one here).
 */
const SCRIPT = `
'use strict';
(function () {
  var TOKEN_KEY = 'drumcrawl-control-token';
  var tokenInput = document.getElementById('token');
  var msg = document.getElementById('msg');
  var conn = document.getElementById('conn');
  var last = null;
  var history = { fine: [], coarse: [] };
  var lastT = 0;

  // The token: from the fragment (never sent to the server), else this tab's sessionStorage.
  var m = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, m[1]);
    window.history.replaceState(null, '', location.pathname);
  }
  tokenInput.value = sessionStorage.getItem(TOKEN_KEY) || '';
  tokenInput.addEventListener('change', function () { sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim()); buttons(); });
  tokenInput.addEventListener('input', buttons);

  function buttons() {
    var none = tokenInput.value.trim() === '';
    var st = last ? last.state : '';
    var over = st === 'done' || st === 'stopped' || st === 'stopping';
    document.getElementById('pause').disabled = none || over || st === 'paused';
    document.getElementById('resume').disabled = none || over || st !== 'paused';
    document.getElementById('stop').disabled = none || over;
  }

  var fmtInt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
  var fmt2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  function show(k, v) {
    if (k === 'state') return v;
    if (k === 'elapsedMs') {
      var s = Math.floor(v / 1000);
      return Math.floor(s / 3600) + 'h' + String(Math.floor(s / 60) % 60).padStart(2, '0') + 'm' + String(s % 60).padStart(2, '0') + 's';
    }
    if (k === 'pagesPerSec' || k === 'mbPerSec') return fmt2.format(v);
    if (k === 'dns.hitRate') return (v * 100).toFixed(0) + '%';
    if (k === 'rssBytes') return (v / 1e6).toFixed(1) + ' MB';
    return fmtInt.format(v);
  }
  function get(o, path) {
    return path.split('.').reduce(function (x, p) { return x == null ? undefined : x[p]; }, o);
  }
  function cell(text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }
  function rows(tbody, list) {
    tbody.replaceChildren.apply(tbody, list.map(function (r) {
      var tr = document.createElement('tr');
      if (r.cls) tr.className = r.cls;
      r.cells.forEach(function (c, i) { tr.appendChild(cell(c, i > 0 ? 'n' : '')); });
      if (r.key !== undefined) tr.dataset.key = r.key;
      return tr;
    }));
  }

  function render(s) {
    last = s;
    document.querySelectorAll('[data-k]').forEach(function (el) {
      var v = get(s, el.dataset.k);
      if (v === undefined || v === null) return;
      el.dataset.v = String(v);
      el.textContent = show(el.dataset.k, v);
    });
    document.getElementById('state').dataset.state = s.state;
    if (s.stopReason) document.getElementById('state').textContent = s.state + ' (' + s.stopReason + ')';
    var outcomes = Object.keys(s.outcomes).map(function (k) { return [k, s.outcomes[k]]; })
      .sort(function (a, b) { return b[1] - a[1] || (a[0] < b[0] ? -1 : 1); });
    rows(document.getElementById('outcomes'), outcomes.map(function (o) {
      var ok = /^[23][0-9][0-9]$/.test(o[0]);
      return { key: o[0], cls: ok ? '' : 'err', cells: [o[0], fmtInt.format(o[1])] };
    }));
    rows(document.getElementById('plds'), (s.topPlds || []).map(function (p) {
      return { key: p.pld, cells: [p.pld, (p.overcount > 0 ? '≤ ' : '') + fmtInt.format(p.pages), fmtInt.format(p.budget), fmtInt.format(p.admitted)] };
    }));
    buttons();
  }

  // Rates from consecutive counter samples: (Δcounter / Δt) per second.
  function rates(samples, field, scale) {
    var out = [];
    for (var i = 1; i < samples.length; i++) {
      var dt = (samples[i].t - samples[i - 1].t) / 1000;
      if (dt > 0) out.push([samples[i].t, Math.max(0, samples[i][field] - samples[i - 1][field]) / dt / scale]);
    }
    return out;
  }
  var SVGNS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, text) {
    var e = document.createElementNS(SVGNS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // xName: the x axis is that quantity (its first and last value are shown), not time.
  function chart(svg, series, unit, xName) {
    var W = 800, H = 180, L = 56, R = 8, T = 10, B = 20;
    var all = [];
    series.forEach(function (s) { all = all.concat(s.points); });
    var kids = [el('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }), el('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B })];
    if (all.length === 0) {
      kids.push(el('text', { x: L + 8, y: H / 2 }, 'collecting samples…'));
      svg.replaceChildren.apply(svg, kids);
      return;
    }
    var t0 = Math.min.apply(null, all.map(function (p) { return p[0]; }));
    var t1 = Math.max.apply(null, all.map(function (p) { return p[0]; }));
    var ymax = Math.max.apply(null, all.map(function (p) { return p[1]; }));
    if (!(ymax > 0)) ymax = 1;
    var x = function (t) { return L + (t1 === t0 ? 0 : (t - t0) / (t1 - t0)) * (W - L - R); };
    var y = function (v) { return H - B - (v / ymax) * (H - B - T); };
    [0.25, 0.5, 0.75, 1].forEach(function (f) {
      kids.push(el('line', { class: 'axis', x1: L, y1: y(ymax * f), x2: W - R, y2: y(ymax * f), 'stroke-dasharray': '2 4' }));
      kids.push(el('text', { x: L - 4, y: y(ymax * f) + 4, 'text-anchor': 'end' }, fmt2.format(ymax * f)));
    });
    kids.push(el('text', { x: L - 4, y: H - B, 'text-anchor': 'end' }, '0'));
    kids.push(el('text', { x: L + 4, y: T + 2 }, unit));
    if (xName) {
      kids.push(el('text', { x: L, y: H - 4 }, fmtInt.format(t0) + ' ' + xName));
      kids.push(el('text', { x: W - R, y: H - 4, 'text-anchor': 'end' }, fmtInt.format(t1) + ' ' + xName));
    } else {
      var ago = (Date.now() - t0) / 1000;
      kids.push(el('text', { x: L, y: H - 4 }, ago < 120 ? Math.round(ago) + ' s ago' : Math.round(ago / 60) + ' min ago'));
      kids.push(el('text', { x: W - R, y: H - 4, 'text-anchor': 'end' }, 'now'));
    }
    series.forEach(function (s) {
      var d = s.points.map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' ');
      kids.push(el('polyline', { points: d, fill: 'none', stroke: s.color, 'stroke-width': 2, 'data-series': s.name }));
    });
    svg.replaceChildren.apply(svg, kids);
  }
  function drawCharts() {
    var coarse = document.querySelector('input[name=range][value=coarse]').checked;
    var samples = coarse ? history.coarse : history.fine;
    chart(document.getElementById('chart-pages'), [
      { name: 'pages', color: '#2662d9', points: rates(samples, 'pages', 1) },
      { name: 'failures', color: '#c2410c', points: rates(samples, 'failures', 1) },
    ], 'pages/s');
    chart(document.getElementById('chart-bytes'), [{ name: 'bytes', color: '#0e9384', points: rates(samples, 'bytes', 1e6) }], 'MB/s');
    var cpu = [], bySeen = [];
    for (var i = 1; i < samples.length; i++) {
      var a = samples[i - 1], b = samples[i], dp = b.pages - a.pages, dt = (b.t - a.t) / 1000;
      // (a resumed run starts its CPU count again: such a pair is skipped)
      if (dp > 0 && b.cpuMs >= a.cpuMs) cpu.push([b.t, (b.cpuMs - a.cpuMs) / dp]);
      if (dt > 0 && dp >= 0) bySeen.push([b.urlsSeen, dp / dt]);
    }
    var MiB = 1048576;
    var t0 = samples.length > 0 ? samples[0].t : 0, t1 = samples.length > 0 ? samples[samples.length - 1].t : 0;
    var ram = samples.length > 0 ? samples[samples.length - 1].ramBytes / MiB : 0;
    chart(document.getElementById('chart-cpu'), [{ name: 'cpu', color: '#7a5af8', points: cpu }], 'CPU ms/page');
    chart(document.getElementById('chart-rss'), [
      { name: 'rss', color: '#2662d9', points: samples.map(function (s) { return [s.t, s.rssBytes / MiB]; }) },
      { name: 'heap', color: '#0e9384', points: samples.map(function (s) { return [s.t, s.heapBytes / MiB]; }) },
      { name: 'ram', color: '#1d2330', points: ram > 0 ? [[t0, ram], [t1, ram]] : [] },
    ], 'MiB');
    chart(document.getElementById('chart-pauses'), [
      { name: 'merge', color: '#2662d9', points: samples.map(function (s) { return [s.t, s.mergeMs / 1000]; }) },
      { name: 'checkpoint', color: '#c2410c', points: samples.map(function (s) { return [s.t, s.checkpointMs / 1000]; }) },
      { name: 'loop', color: '#667085', points: samples.map(function (s) { return [s.t, s.loopMs / 1000]; }) },
    ], 's');
    chart(document.getElementById('chart-urlseen'), [{ name: 'pages-by-seen', color: '#2662d9', points: bySeen }], 'pages/s', 'URLs seen');
  }
  document.querySelectorAll('input[name=range]').forEach(function (r) { r.addEventListener('change', drawCharts); });

  function getJson(path) {
    return fetch(path, { cache: 'no-store' }).then(function (r) {
      if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
      return r.json();
    });
  }
  function keep(ring, add, max) {
    var out = ring.concat(add);
    return out.length > max ? out.slice(out.length - max) : out;
  }
  function poll() {
    return Promise.all([getJson('/status'), getJson('/history?since=' + lastT)]).then(function (res) {
      conn.textContent = '';
      render(res[0]);
      var h = res[1];
      history.fine = keep(history.fine, h.fine, 900);
      history.coarse = keep(history.coarse, h.coarse.filter(function (s) {
        var prev = history.coarse[history.coarse.length - 1];
        return !prev || s.t > prev.t;
      }), 1440);
      if (h.fine.length > 0) lastT = h.fine[h.fine.length - 1].t;
      drawCharts();
      document.body.dataset.updated = String(Date.now());
    }).catch(function (e) {
      conn.textContent = 'not connected (' + e.message + ')';
    });
  }

  function control(verb) {
    var token = tokenInput.value.trim();
    if (verb === 'stop' && !window.confirm('Stop the crawl? It drains in-flight fetches, checkpoints and exits; it can be resumed.')) return;
    msg.textContent = verb + '…';
    fetch('/' + verb, { method: 'POST', headers: { authorization: 'Bearer ' + token }, cache: 'no-store' })
      .then(function (r) { return r.json().then(function (b) { return { status: r.status, body: b }; }); })
      .then(function (r) {
        msg.textContent = r.body.ok ? verb + ': ' + r.body.state : verb + ' refused: ' + (r.body.code || r.status);
        msg.dataset.result = r.body.ok ? 'ok' : String(r.body.code || r.status);
        return poll();
      })
      .catch(function (e) { msg.textContent = verb + ' failed: ' + e.message; msg.dataset.result = 'error'; });
  }
  ['pause', 'resume', 'stop'].forEach(function (v) {
    document.getElementById(v).addEventListener('click', function () { control(v); });
  });

  buttons();
  poll();
  setInterval(poll, 1000);
})();
`;
