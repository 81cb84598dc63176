/**
 * bench:realweb's command line (bench/realweb/options.ts): `--help` is the usage and nothing else,
 * a misspelt option or a bad value is refused before the bench builds or starts anything.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRealwebArgs, USAGE } from '../../bench/realweb/options.js';

test('--help and -h ask for the usage, wherever they stand', () => {
  assert.equal(parseRealwebArgs(['--help']), 'help');
  assert.equal(parseRealwebArgs(['-h']), 'help');
  assert.equal(parseRealwebArgs(['--rounds', '1', '--help']), 'help');
  assert.match(USAGE, /^usage: npm run bench:realweb/);
  for (const opt of ['--rounds', '--ab', '--no-build', '--sim-pages', '--warm-pages', '--seconds', '--no-links', '--no-simweb', '--cpu-prof', '--perf', '--out']) {
    assert.ok(USAGE.includes(opt), `${opt} in the usage`);
  }
});

test('the defaults, and the options as documented', () => {
  assert.deepEqual(parseRealwebArgs([]), {
    rounds: 2, ab: null, build: true, simPages: 12_000, warmPages: 4_000, seconds: 120, links: true, simweb: true, cpuProf: null, perf: null, out: 'realweb',
  });
  assert.deepEqual(
    parseRealwebArgs(['--ab', '6cb5053,84d9422', '--rounds', '1', '--no-links', '--no-simweb', '--out=x', '--sim-pages', '600', '--cpu-prof', '/tmp/p']),
    { rounds: 1, ab: ['6cb5053', '84d9422'], build: true, simPages: 600, warmPages: 4_000, seconds: 120, links: false, simweb: false, cpuProf: '/tmp/p', perf: null, out: 'x' },
  );
});

test('an unknown option, a missing or bad value is refused', () => {
  for (const argv of [['--hlep'], ['--rounds'], ['--rounds', 'two'], ['--rounds', '0'], ['--ab', 'a,,b'], ['--out', '--no-links'], ['extra'], ['--no-links=1']]) {
    assert.throws(() => parseRealwebArgs(argv), Error, argv.join(' '));
  }
});
