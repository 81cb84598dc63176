/**
 * Spam resistance end to end (issue #18): the real crawler (`drumcrawl crawl`, its own process)
 * against simweb's host-minting farm (`adv-mint`: one farm PLD linked once from the good web, every
 * farm page linking to 20 freshly minted hosts on 200 IPs of its own) over loopback TCP and DNS,
 * with default settings besides the measurement's delays (bench/adversary/config.ts). Judged from
 * the server's request log (bench/adversary/measure.ts): the same seed crawled without and then with
 * the farm; the time to 90 % of the good web may grow by at most 1.25×, and the farm may take at
 * most 25 % of the fetches before 90 % good coverage.
 *
 * A run stops by itself at 100 % good coverage or after its time limit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { measureCoverage } from '../../bench/adversary/measure.js';

const LIMIT_S = 25;
// Both runs stop at 100 % good coverage: about 10 s each when the crawl is fine.

test('a host-minting farm neither slows the good web past 1.25× nor takes more than 25 % of its fetches', { timeout: 240_000 }, async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-adv-e2e-'));
  const lines: string[] = [];
  const log = (s: string): void => void lines.push(s);
  try {
    const alone = await measureCoverage({ preset: 'adv-mint', adversary: false, timeLimitS: LIMIT_S, scratch, log });
    const withFarm = await measureCoverage({ preset: 'adv-mint', adversary: true, timeLimitS: LIMIT_S, scratch, log });
    const why = `\n${lines.join('\n')}\nwith the farm, stderr: ${withFarm.stderrTail}`;
    assert.ok(alone.t90 !== null, `the good web alone reaches 90 % within ${LIMIT_S} s${why}`);
    assert.ok(withFarm.t90 !== null, `with the farm the good web reaches 90 % within ${LIMIT_S} s${why}`);
    const slowdown = withFarm.t90 / alone.t90;
    t.diagnostic(`t90 ${alone.t90.toFixed(2)} s alone, ${withFarm.t90.toFixed(2)} s with the farm (×${slowdown.toFixed(2)}); farm ${withFarm.farmFetchesTo90} of ${withFarm.fetchesTo90} fetches before 90 %`);
    assert.ok(slowdown <= 1.25, `slowdown t90 ${slowdown.toFixed(2)} (${withFarm.t90} s / ${alone.t90} s) ≤ 1.25${why}`);
    assert.ok(withFarm.farmFetchesTo90 > 0, `the farm was found and crawled${why}`);
    assert.ok(withFarm.adversaryShareTo90 <= 0.25, `farm share before 90 %: ${(100 * withFarm.adversaryShareTo90).toFixed(1)} % ≤ 25 %${why}`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
