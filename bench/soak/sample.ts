/**
 * bench/soak's once-a-second sample of a running crawler, from the crawler's own `/status`
 * (src/monitor/stats.ts StatusSnapshot with its `run` part, src/monitor/run-metrics.ts) and from /proc:
 * VmRSS and VmHWM, the process' CPU and each thread's (by the role /status names for its id: main,
 * parse, drum:…; the rest is "runtime"), open file descriptors, the load average; and of simweb's
 * process, its CPU. Merge and checkpoint durations come as /status's recent lists and are kept
 * once each (by end time).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { statCpu } from '../lib/thread-cpu.js';

export interface Sample {
  /** seconds since the soak started */
  t: number;
  /** which crawler process (1 = the crawl, 2… = resumes) */
  run: number;
  /** /status answered */
  up: boolean;
  pages: number;
  started: number;
  seen: number;
  queued: number;
  ready: number;
  inFlight: number;
  robots: number;
  due: boolean;
  rssMiB: number;
  hwmMiB: number;
  heapMiB: number;
  /** process CPU of this run (ms), and per thread role */
  cpuMs: number;
  roleMs: Record<string, number>;
  fds: number;
  loopMaxMs: number;
  ramUrls: number;
  hosts: number;
  hostMiB: number;
  beastQueued: number;
  qf: number;
  qh: number;
  qr: number;
  load1: number;
  simCpuMs: number;
}

export interface Pause {
  run: number;
  /** `hold`: how long a checkpoint held the scheduler (absent from crawlers that do not report it) */
  kind: 'urlseen' | 'contentseen' | 'checkpoint' | 'hold';
  /** seconds since the soak started, when it ended */
  t: number;
  ms: number;
}

interface RecentList { recent: { at: number; ms: number }[] }
interface StatusJson {
  pages: number; urlsSeen: number; urlsQueued: number; urlsReady: number; inFlight: number; robotsFetches: number;
  run?: {
    pagesStarted: number; dueNow: boolean; heap: { usedBytes: number }; loopDelay: { lastSecMaxMs: number };
    merges: { urlSeen: RecentList; contentSeen: RecentList }; checkpoints: RecentList; checkpointHolds?: RecentList;
    frontier: Record<string, number>; threads: Record<string, string>;
  };
}

const MiB = 1024 * 1024;

function procField(status: string, name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status);
  return m === null ? 0 : Number(m[1]) / 1024;
}

export function procCpuMs(pid: number): number {
  try {
    const c = statCpu(readFileSync(`/proc/${pid}/stat`, 'latin1'));
    return c.user + c.sys;
  } catch {
    return 0;
  }
}

export class Sampler {
  readonly samples: Sample[] = [];
  readonly pauses: Pause[] = [];
  private readonly seenPause = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(private readonly t0: number, private readonly simPid: number) {}

  /** Sample `pid` (run number `run`, its status server at `statusUrl`) every second until stop(). */
  start(pid: number, run: number, statusUrl: () => string | null): void {
    this.stop();
    this.timer = setInterval(() => {
      if (this.busy) return; // a slow /status answer: skip a second rather than pile up requests
      this.busy = true;
      void this.once(pid, run, statusUrl()).finally(() => {
        this.busy = false;
      });
    }, 1000);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async once(pid: number, run: number, url: string | null): Promise<void> {
    let s: StatusJson | null = null;
    if (url !== null) {
      try {
        const r = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) });
        s = (await r.json()) as StatusJson;
      } catch {
        s = null;
      }
    }
    let status = '';
    try {
      status = readFileSync(`/proc/${pid}/status`, 'latin1');
    } catch {
      return; // the process is gone
    }
    const roles = s?.run?.threads ?? {};
    const roleMs: Record<string, number> = {};
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      tasks = [];
    }
    for (const tid of tasks) {
      try {
        const c = statCpu(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1'));
        const role = roles[tid] ?? 'runtime';
        roleMs[role] = (roleMs[role] ?? 0) + c.user + c.sys;
      } catch {
        /* the thread ended */
      }
    }
    let fds = 0;
    try {
      fds = readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      fds = 0;
    }
    const f = s?.run?.frontier ?? {};
    const sample: Sample = {
      t: Math.round((Date.now() - this.t0) / 100) / 10,
      run,
      up: s !== null,
      pages: s?.pages ?? NaN,
      started: s?.run?.pagesStarted ?? NaN,
      seen: s?.urlsSeen ?? NaN,
      queued: s?.urlsQueued ?? NaN,
      ready: s?.urlsReady ?? NaN,
      inFlight: s?.inFlight ?? NaN,
      robots: s?.robotsFetches ?? NaN,
      due: s?.run?.dueNow ?? false,
      rssMiB: Math.round(procField(status, 'VmRSS') * 10) / 10,
      hwmMiB: Math.round(procField(status, 'VmHWM') * 10) / 10,
      heapMiB: Math.round(((s?.run?.heap.usedBytes ?? 0) / MiB) * 10) / 10,
      cpuMs: Math.round(procCpuMs(pid)),
      roleMs,
      fds,
      loopMaxMs: s?.run?.loopDelay.lastSecMaxMs ?? NaN,
      ramUrls: f.ramUrls ?? NaN,
      hosts: f.hosts ?? NaN,
      hostMiB: Math.round(((f.hostBytes ?? 0) / MiB) * 10) / 10,
      beastQueued: f.beastQueued ?? NaN,
      qf: f.qf ?? NaN,
      qh: f.qh ?? NaN,
      qr: f.qr ?? NaN,
      load1: Number(readFileSync('/proc/loadavg', 'latin1').split(' ')[0]),
      simCpuMs: Math.round(procCpuMs(this.simPid)),
    };
    this.samples.push(sample);
    if (s?.run !== undefined) {
      const lists: [Pause['kind'], RecentList][] = [['urlseen', s.run.merges.urlSeen], ['contentseen', s.run.merges.contentSeen], ['checkpoint', s.run.checkpoints]];
      if (s.run.checkpointHolds !== undefined) lists.push(['hold', s.run.checkpointHolds]);
      for (const [kind, l] of lists) {
        for (const e of l.recent) {
          const key = `${run}:${kind}:${e.at}`;
          if (this.seenPause.has(key)) continue;
          this.seenPause.add(key);
          this.pauses.push({ run, kind, t: Math.round((e.at - this.t0) / 100) / 10, ms: e.ms });
        }
      }
    }
  }
}
