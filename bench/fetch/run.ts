/**
 * bench/fetch — fetches per second and CPU per fetch of drumcrawl's Fetcher against simweb on
 * loopback (keep-alive, ~21.5 KB HTML pages), compared with a bare `undici.request` loop on the
 * same server, same URLs, same concurrency and connection count. simweb runs in a child process so
 * `process.cpuUsage()` here measures the client only. Rounds alternate (raw, fetcher, raw, …) to
 * spread machine noise evenly; the ratio of medians is the result.
 *
 *   npm run bench:fetch -- [--fetches N] [--rounds R] [--concurrency C] [--hosts H] [--out FILE]
 *   npm run bench:fetch -- --robots     (robots.txt parse/match speed, see robots-match.ts)
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { Fetcher, LOOPBACK_NETWORKS } from '../../src/fetch/index.js';

const args = process.argv.slice(2);
if (args.includes('--robots')) {
  const { runRobotsBench } = await import('./robots-match.js');
  await runRobotsBench(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../results/fetch-robots-match.json'));
  process.exit(0);
}
const arg = (name: string, dflt: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const FETCHES = arg('fetches', 4000);
const ROUNDS = arg('rounds', 5);
const CONC = arg('concurrency', 8);
const HOSTS = arg('hosts', 8);
const outIdx = args.indexOf('--out');
const here = path.dirname(fileURLToPath(import.meta.url));
const outFile = outIdx >= 0 ? args[outIdx + 1]! : path.resolve(here, '../results/fetch-overhead.json');
const UA = 'drumcrawl/0.1 (+http://crawler.test/about)';

interface Target { url: string; ip: string; host: string }

const child = fork(path.join(here, 'simweb-child.ts'), [String(HOSTS)], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
const info = await new Promise<{ httpPort: number; targets: Target[] }>((resolve) => child.once('message', (m) => resolve(m as never)));
const targets = info.targets;
// Requests go to the IP literal with the Host header set, exactly as the Fetcher does.
const rawUrls = targets.map((t) => ({ origin: `http://${t.ip}:${info.httpPort}`, path: new URL(t.url).pathname, host: `${t.host}:${info.httpPort}` }));

async function loop(n: number, one: (i: number) => Promise<number>): Promise<{ wallMs: number; cpuUs: number; bytes: number }> {
  let next = 0;
  let bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONC }, async () => {
    while (next < n) {
      const i = next++;
      const b = await one(i % targets.length); // not `bytes += await …`: that reads `bytes` before the await
      bytes += b;
    }
  }));
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wallMs, cpuUs: c.user + c.system, bytes };
}

const rawAgent = new Agent({ connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
const raw = (i: number): Promise<number> => {
  const u = rawUrls[i]!;
  return request(u.origin + u.path, {
    dispatcher: rawAgent, headers: { host: u.host, 'user-agent': UA, 'accept-encoding': 'gzip, deflate, br' },
  }).then(async (res) => {
    const b = await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`raw status ${res.statusCode}`);
    return b.byteLength;
  });
};
const fetcher = new Fetcher({ userAgent: UA, connectionsPerPool: 1, allowedNetworks: LOOPBACK_NETWORKS });
const ours = (i: number): Promise<number> => {
  const t = targets[i]!;
  return fetcher.fetch({ url: t.url, ip: t.ip }).then((r) => {
    if (r.outcome !== 'ok') throw new Error(`fetcher outcome ${r.outcome}`);
    return r.body.length;
  });
};

// Warm up both paths (JIT, connections).
await loop(Math.min(1000, FETCHES), raw);
await loop(Math.min(1000, FETCHES), ours);

const rawRuns: Array<{ wallMs: number; cpuUs: number; bytes: number }> = [];
const ourRuns: typeof rawRuns = [];
for (let r = 0; r < ROUNDS; r++) {
  rawRuns.push(await loop(FETCHES, raw));
  ourRuns.push(await loop(FETCHES, ours));
}
await fetcher.close();
await rawAgent.close();
child.send('stop');

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
const summarize = (runs: typeof rawRuns) => ({
  fetchesPerSec: Math.round(median(runs.map((x) => (FETCHES / x.wallMs) * 1000))),
  cpuUsPerFetch: Number(median(runs.map((x) => x.cpuUs / FETCHES)).toFixed(1)),
  meanBodyBytes: Math.round(runs[0]!.bytes / FETCHES),
  rounds: runs.map((x) => ({ fetchesPerSec: Math.round((FETCHES / x.wallMs) * 1000), cpuUsPerFetch: Number((x.cpuUs / FETCHES).toFixed(1)) })),
});
const rawS = summarize(rawRuns);
const ourS = summarize(ourRuns);
const result = {
  bench: 'fetch-overhead',
  command: `npm run bench:fetch -- --fetches ${FETCHES} --rounds ${ROUNDS} --concurrency ${CONC} --hosts ${HOSTS}`,
  date: new Date().toISOString(),
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.release()}` },
  setup: {
    server: 'simweb preset demo in a child process (its CPU is not counted), loopback, HTTP/1.1 keep-alive',
    targets: targets.length, hostsOnDistinctIps: HOSTS, concurrency: CONC, connectionsPerIp: 1, fetchesPerRound: FETCHES, rounds: ROUNDS,
    raw: 'undici.request() to http://IP:port with a Host header, body read with arrayBuffer(), Agent{connections:1}',
    fetcher: 'Fetcher.fetch({url, ip}) — same IPs/Host headers, plus request/response head reconstruction, caps, timeouts, classification',
  },
  raw: rawS,
  fetcher: ourS,
  cpuOverheadRatio: Number((ourS.cpuUsPerFetch / rawS.cpuUsPerFetch - 1).toFixed(3)),
  throughputRatio: Number((ourS.fetchesPerSec / rawS.fetchesPerSec).toFixed(3)),
  target: 'cpuOverheadRatio < 0.25 (fetcher CPU per fetch at most 25 % above raw undici)',
  note: 'Shared 2-core machine with several engineers working at once: absolute numbers are low and noisy; compare the ratios, measured in the same run with alternating rounds.',
};
console.log(JSON.stringify(result, null, 2));
mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
