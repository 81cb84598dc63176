/**
 * Where the main thread's time goes, by function/module group, from a V8 `--cpu-prof` profile of a
 * bench:e2e run (docs/performance.md, "Where the main thread's time goes"):
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/e2e/run.ts --seconds 30 --max-pages 300000 --out /tmp/prof/e2e.json
 *   node --import tsx bench/e2e/profile-groups.ts --profile /tmp/prof/CPU.<…>.<pid>.0.001.cpuprofile --result /tmp/prof/e2e.json [--out e2e-main-profile]  (→ bench/results/<name>.json)
 *
 * (`…<pid>.0.…` is the main thread's profile: thread id 0. bench:e2e runs itself again under the
 * launcher's malloc settings when they are not in its environment (bench/lib/launcher-env.ts): the
 * crawl's profiles are then the child's, the larger set of files.) Only the samples inside the bench's
 * steady window (`roleCpu.steady.monoUs`: V8 stamps samples on the same monotonic clock) count,
 * and they are divided by that window's pages.
 *
 * Each sample goes to the group of its innermost frame that belongs to a known module (undici,
 * piscina, the crawler's folders…): a Node built-in or a native function is charged to the module
 * that called it (Buffer.concat under undici is undici's). Frames with no known module anywhere
 * on the stack are "node runtime" (streams, timers, net, microtask ticks called by the event loop).
 *
 * Caveat: V8's profiler samples on a timer, not on CPU time: a sample taken while the thread
 * waits for a core (preempted on a loaded box) is charged to where it stopped. '(idle)' samples
 * (the event loop waiting in epoll) are left out; the remaining time is compared with the thread's
 * measured CPU (utime + stime of the same window) in the output.
 */
import { readFileSync } from 'node:fs';
import { args, writeResult } from '../lib/report.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Module groups by the frame's script URL (dist/ or src/ of the crawler, node_modules packages). */
const GROUPS: [RegExp, string][] = [
  [/node_modules\/undici\//, 'undici (HTTP client: request, parse, socket I/O)'],
  [/node_modules\/piscina\//, 'piscina (parse hand-off)'],
  [/node_modules\/zstd-napi\//, 'zstd (BEAST blocks)'],
  [/node_modules\/xxhash-wasm\//, 'URL keys (xxhash)'],
  [/\/(?:dist|src)\/fetch\//, 'fetcher (src/fetch)'],
  [/\/(?:dist|src)\/frontier\//, 'frontier (STAR, BEAST, politeness)'],
  [/\/(?:dist|src)\/store\//, 'WARC + crawl log writing (src/store)'],
  [/\/(?:dist|src)\/url\//, 'URL canonicalisation + keys (src/url)'],
  [/\/(?:dist|src)\/(?:drum\/|threads\/drum\/|crawl\/drum-proxy|crawl\/drum-codec)/, 'DRUM orchestration (proxies, batch codec)'],
  [/\/(?:dist|src)\/(?:crawl\/parse-pool|threads\/page\/(?:parse-pool|page-worker-pool|lanes))/, 'page hand-off (page-worker-pool, parse-pool, lanes)'],
  [/\/(?:dist|src)\/(?:crawl\/(?:parse-worker|links-codec)|threads\/(?:page\/parse-worker|links-codec))/, 'parse batches: packing, answer decoding (parse-worker, links-codec)'],
  [/\/(?:dist|src)\/threads\/archive\//, 'WARC writer hand-off (archive-thread, archive-pack)'],
  [/\/(?:dist|src)\/crawl\/(?:content|archive|urlseen|admit|durable)\//, 'stages after the parse (ContentSeen, archive, URLseen, admit, sync)'],
  [/\/(?:dist|src)\/crawl\/(?:fetch\/|fetched\/|ports\/floor-guard|request-headers|retry-policy)/, 'fetch stages (dispatch, floor guard, fetch report)'],
  [/\/(?:dist|src)\/(?:robots\/|crawl\/robots)/, 'robots'],
  [/\/(?:dist|src)\/dns\//, 'DNS'],
  [/\/(?:dist|src)\/(?:sitemap\/|crawl\/sitemap)/, 'sitemaps'],
  [/\/(?:dist|src)\/html\//, 'html'],
  [/\/(?:dist|src)\/crawl\/(?:stats|status|metrics)/, 'stats + status'],
  [/\/(?:dist|src)\/crawl\//, 'pipeline (scheduler, checkpoint, crawl log glue)'],
  [/\/bench\/|\/tsx\//, 'bench harness (sampler, trace)'],
];
const SPECIAL: Record<string, string> = {
  '(garbage collector)': 'GC (main isolate, on the main thread)',
  '(program)': 'native, no JS frame ((program))',
  '(idle)': '(idle)',
};

function groupOf(n: ProfileNode): string | null {
  const s = SPECIAL[n.callFrame.functionName];
  if (s !== undefined && n.callFrame.url === '') return s;
  for (const [re, g] of GROUPS) if (re.test(n.callFrame.url)) return g;
  return null;
}

export function groupProfile(p: CpuProfile, fromUs: number, toUs: number): { groups: Map<string, number>; fns: Map<string, { group: string; us: number }>; idleUs: number; busyUs: number } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const group = new Map<number, string>();
  const walk = (id: number, inherited: string): void => {
    const n = byId.get(id)!;
    const g = groupOf(n) ?? inherited;
    group.set(id, g);
    for (const c of n.children ?? []) walk(c, g);
  };
  walk(p.nodes[0]!.id, 'node runtime (streams, timers, net, microtasks)');
  const groups = new Map<string, number>();
  const fns = new Map<string, { group: string; us: number }>();
  let idleUs = 0;
  let busyUs = 0;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    // the time until the next sample is this sample's
    const dt = p.timeDeltas[i + 1] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const id = p.samples[i]!;
    const g = group.get(id)!;
    if (g === '(idle)') {
      idleUs += dt;
      continue;
    }
    busyUs += dt;
    groups.set(g, (groups.get(g) ?? 0) + dt);
    const cf = byId.get(id)!.callFrame;
    const key = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${cf.lineNumber + 1}`;
    const f = fns.get(key) ?? { group: g, us: 0 };
    f.us += dt;
    fns.set(key, f);
  }
  return { groups, fns, idleUs, busyUs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const a = args();
  const profFile = a.get('profile');
  const resultFile = a.get('result');
  if (profFile === undefined || resultFile === undefined) {
    process.stderr.write('usage: profile-groups.ts --profile <main-thread .cpuprofile> --result <bench:e2e JSON> [--out <name in bench/results>]\n');
    process.exit(2);
  }
  const prof = JSON.parse(readFileSync(profFile, 'utf8')) as CpuProfile;
  const res = JSON.parse(readFileSync(resultFile, 'utf8')) as {
    command: string; pagesPerSec: number;
    roleCpu: { steady: { pages: number; seconds: number; monoUs: { from: number; to: number }; roles: { role: string; msPerPage: number }[] } };
  };
  const st = res.roleCpu.steady;
  if (st.monoUs.to < prof.startTime || st.monoUs.from > prof.endTime) {
    process.stderr.write('profile-groups: the profile does not cover the bench\'s steady window (another run\'s files?)\n');
    process.exit(2);
  }
  const { groups, fns, idleUs, busyUs } = groupProfile(prof, st.monoUs.from, st.monoUs.to);
  const pages = Math.max(1, st.pages);
  const mainCpu = st.roles.find((r) => r.role === 'main')?.msPerPage ?? null;
  const rows = [...groups].sort((x, y) => y[1] - x[1]).map(([g, us]) => ({ group: g, msPerPage: us / 1000 / pages, share: us / Math.max(1, busyUs) }));
  const top = [...fns].sort((x, y) => y[1].us - x[1].us).slice(0, 25).map(([fn, f]) => ({ fn, group: f.group, msPerPage: f.us / 1000 / pages }));
  const out = {
    bench: 'e2e-main-profile',
    command: `${res.command} under node --cpu-prof; node --import tsx bench/e2e/profile-groups.ts --profile <main .cpuprofile> --result <that JSON>`,
    window: { seconds: st.seconds, pages: st.pages, pagesPerSec: st.pages / st.seconds },
    /** busy = non-idle samples in the window, per page; mainCpu = the thread's utime+stime per page in the same window */
    busyMsPerPage: busyUs / 1000 / pages,
    idleMsPerPage: idleUs / 1000 / pages,
    mainCpuMsPerPage: mainCpu,
    groups: rows,
    topFunctions: top,
    note: 'Sampled on a timer (V8 --cpu-prof), not on CPU time: busy time includes waits for a core on a loaded box; compare the shares, and mainCpuMsPerPage for the thread\'s CPU.',
  };
  const outFile = a.get('out');
  if (outFile !== undefined) writeResult(outFile, out);
  for (const r of rows) process.stdout.write(`${(r.share * 100).toFixed(1).padStart(5)} %  ${r.msPerPage.toFixed(4)} ms/page  ${r.group}\n`);
  process.stdout.write(`busy ${out.busyMsPerPage.toFixed(3)} ms/page, idle ${out.idleMsPerPage.toFixed(3)}, main CPU ${mainCpu?.toFixed(3)}\n`);
  for (const f of top.slice(0, 15)) process.stdout.write(`  ${f.msPerPage.toFixed(4)}  ${f.fn}  [${f.group}]\n`);
}
