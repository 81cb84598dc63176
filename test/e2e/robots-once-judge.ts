/**
 * The robots-once rule judged from the server's request log: each host's robots.txt is requested at
 * most once per robots expiry period. Two requests of one host closer than `periodMs` are a repeat;
 * a repeat is excused only when the earlier request started inside the in-flight window of a
 * SIGKILL (`windowMs` before the kill): an answer received but not yet committed to RobotsCache
 * dies with the process, and so does the record of a request in flight.
 */
export interface RobotsOnceVerdict {
  hosts: number;
  requests: number;
  /** hosts asked more than once within periodMs, without an excuse */
  repeated: string[];
  /** repeats excused by a kill's in-flight window */
  excused: string[];
}

export function judgeRobotsOnce(
  requests: readonly { host: string; start: number }[],
  opts: { periodMs: number; kills?: readonly number[]; windowMs?: number },
): RobotsOnceVerdict {
  const byHost = new Map<string, number[]>();
  for (const r of requests) {
    let a = byHost.get(r.host);
    if (a === undefined) byHost.set(r.host, (a = []));
    a.push(r.start);
  }
  const repeated: string[] = [];
  const excused: string[] = [];
  const w = opts.windowMs ?? 0;
  for (const [host, starts] of byHost) {
    starts.sort((x, y) => x - y);
    for (let i = 1; i < starts.length; i++) {
      const prev = starts[i - 1]!;
      if (starts[i]! - prev >= opts.periodMs) continue;
      const killed = (opts.kills ?? []).some((k) => prev >= k - w && prev <= k);
      (killed ? excused : repeated).push(`${host} (${starts.length} requests)`);
      break;
    }
  }
  return { hosts: byHost.size, requests: requests.length, repeated, excused };
}
