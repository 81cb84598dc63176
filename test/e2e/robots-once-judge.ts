/**
 * The robots-once rule judged from the server's request log: each host's robots.txt is requested at
 * most once per robots expiry period. Two requests of one host closer than `periodMs` are a repeat.
 *
 * The one excuse is a request in flight at a SIGKILL: sent by the killed process, its answer not yet
 * received by the crawler. The crawler journals every answer it receives with a synchronous write
 * before using it (src/robots/robots-journal.ts), so an answer it had received survives the kill and
 * its host is not asked again; an answer still on its way dies with the process. The server log
 * has the time each answer ended (`end`: its last byte handed to the kernel); the crawler's journal
 * write follows within `allowanceMs` (ROBOTS_ANSWER_LAG_MS below). So a repeat is excused only when
 * the earlier request's answer ended after (kill − allowanceMs), the earlier request started before
 * (kill + allowanceMs) — a request the killed process wrote just before the kill may be stamped by
 * the server a little after it, and the resumed process is not yet running then (the test starts it
 * only after the killed one has exited) — and the repeat started after the kill. A request without
 * `end` is never excused.
 */
export interface RobotsOnceVerdict {
  hosts: number;
  requests: number;
  /** hosts asked more than once within periodMs, without an excuse */
  repeated: string[];
  /** repeats excused: the earlier request was in flight at a kill */
  excused: string[];
}

/**
 * How long after its answer's last byte leaves simweb the crawler has journaled a robots answer: the
 * loopback hop, the fetcher's end of the response (undici, body decode, robots parse and compile),
 * the WARC writer's queue (archive-hooks.ts archiveRobots, awaited before the answer is used) and
 * the crawler's event loop turns between these steps. Measured on the robots-once e2e crawl (the
 * shared 2-core box; the time of each answered() call, traced in a local build, against the server
 * log's `end` of the same request; 12 runs, 5,291 answers): p50 3 ms, p90 15 ms, p99 60 ms, max
 * 135 ms (one event-loop stall that delayed 4 answers). Almost all of it is spent before the fetch
 * returns, i.e. in the crawler's event loop.
 *
 * Why 250 ms. An allowance is a bound on that lag, and the lag is the crawler's event loop: on a
 * loaded machine (the suite runs two files at once; CI boxes are slower still) a stall of a few
 * hundred ms is ordinary, and an answer that ended inside a stall before a kill was never received
 * by the crawler — excusing it is the rule, failing on it would be a test of the machine. The price:
 * a crawler without the journal loses the answers of its last ~100–130 ms (one RobotsCache round at
 * this test's scale), which this allowance excuses too, so the e2e test cannot tell the journal's
 * absence apart; test/crawl/robots-journal.test.ts does (a SIGKILL between the journal write and the
 * merge, then the next open answers those hosts from RobotsCache). What the e2e test holds across
 * evictions, a graceful stop and kills is everything else: no host is asked again once its answer
 * was received (RobotsCache, RobotsRequested and the journal's replay together).
 */
export const ROBOTS_ANSWER_LAG_MS = 250;

export function judgeRobotsOnce(
  requests: readonly { host: string; start: number; end?: number }[],
  opts: { periodMs: number; kills?: readonly number[]; allowanceMs?: number },
): RobotsOnceVerdict {
  const byHost = new Map<string, { start: number; end?: number }[]>();
  for (const r of requests) {
    let a = byHost.get(r.host);
    if (a === undefined) byHost.set(r.host, (a = []));
    a.push(r);
  }
  const repeated: string[] = [];
  const excused: string[] = [];
  const allowance = opts.allowanceMs ?? ROBOTS_ANSWER_LAG_MS;
  const kills = opts.kills ?? [];
  for (const [host, reqs] of byHost) {
    reqs.sort((x, y) => x.start - y.start);
    let excuse = false;
    for (let i = 1; i < reqs.length; i++) {
      const prev = reqs[i - 1]!;
      const cur = reqs[i]!;
      if (cur.start - prev.start >= opts.periodMs) continue;
      const inFlight = prev.end !== undefined && kills.some((k) => prev.start <= k + allowance && prev.end! > k - allowance && cur.start > k);
      if (!inFlight) {
        repeated.push(`${host} (${reqs.length} requests)`);
        excuse = false;
        break;
      }
      excuse = true;
    }
    if (excuse) excused.push(`${host} (${reqs.length} requests)`);
  }
  return { hosts: byHost.size, requests: requests.length, repeated, excused };
}
