/**
 * A crawl process that receives robots answers and dies before any RobotsCache merge, for
 * robots-journal.test.ts: it opens the robots stage on the directory argv[2], gives it argv[3]
 * answers (authorities http://127.0.0.1:8080 … http://127.0.0.n:8080, valid for an hour) — with
 * argv[4] = 'commit', then a checkpoint's commit — prints "answered merges=<RobotsCache merges>" and
 * then blocks its event loop (no timer runs, so no round merges) until the parent SIGKILLs it.
 */
import { writeSync } from 'node:fs';
import { DnsCache } from '../../src/dns/index.js';
import { compileRobots, parseRobotsTxt } from '../../src/robots/index.js';
import { openRobotsStage, type RobotsStageFrontier } from '../../src/crawl/ports/robots-stage.js';

const f: RobotsStageFrontier = {
  takeRobotsRequests: () => [],
  scheduleRobotsFetch: () => true,
  robotsKnown: () => undefined,
  robotsFailed: () => undefined,
};
const rules = compileRobots(parseRobotsTxt('User-agent: *\nDisallow: /private/\n'), 'drumcrawl');
const stage = await openRobotsStage(process.argv[2]!, 64 << 20, f, new DnsCache());
const expiresAt = Date.now() + 3_600_000;
if (process.argv[4] === 'commit') {
  // No round may merge meanwhile: the stage's round scheduling is stubbed out, as the blocked event
  // loop below does for the kill without a checkpoint.
  (stage as unknown as { maybeRound(): void }).maybeRound = () => undefined;
}
for (let i = 1; i <= Number(process.argv[3]); i++) stage.answered(`http://127.0.0.${i}:8080`, { rules, outcome: 'ok', expiresAt, sitemaps: [] });
if (process.argv[4] === 'commit') await stage.commit();
writeSync(1, `answered merges=${stage.stats().cache.merges}\n`);
// Blocks for at most a minute (the parent kills it within milliseconds; the bound keeps a lost
// child from living on).
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
