/**
 * The robots-once rule judged from the server's request log: each host's robots.txt is requested at
 * most once per robots expiry period. Two requests of one host closer than `periodMs` are a repeat.
 *
 * The one excuse is a request in flight at a SIGKILL: sent by the killed process, its answer not yet
 * received by the crawler. The crawler journals every answer it receives with a synchronous write
 * before using it (src/crawl/robots-journal.ts), so an answer it had received survives the kill and
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
 * Why 50 ms. A stall longer than the allowance fails the test only if a kill lands inside its
 * excess: the union of the windows [end + 50 ms, journal write] covered 472 ms of those runs' 392 s
 * of crawl (0.12 %), so about 1 kill in 800. Of the 120 answers that ended within 100 ms before one
 * of 30 kills, the only ones not journaled before the kill had ended ≤ 3 ms before it. A crawler
 * without the journal (RobotsCache merges every ~100–130 ms at this test's scale) asked again
 * hosts whose answers had ended 0–120 ms before a kill, about half of them more than 50 ms before:
 * a larger allowance would excuse most of what it loses.
 */
export const ROBOTS_ANSWER_LAG_MS = 50;

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
