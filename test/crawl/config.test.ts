import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  parseCrawlArgs, resolveCrawlConfig, parseSize, parseDurationMs, loadCrawlConfig, applyRuntimeChange,
  configFromFileObject, parseSeedList, RUNTIME_KEYS, CRAWL_FLAGS, defaultCrawlConfig, type CrawlConfigInput,
} from '../../src/config/config.js';
import { isCrawlError } from '../../src/errors.js';
import fc from 'fast-check';

const cwd = '/tmp/x';
const cfg = (argv: string[]) => resolveCrawlConfig(parseCrawlArgs(argv).input, { cwd });

test('parseSize: table of cases', () => {
  const ok: [string | number, number][] = [
    ['0', 0], ['1024', 1024], ['1K', 1024], ['1k', 1024], ['512M', 512 * 2 ** 20], ['1.5G', 1.5 * 2 ** 30],
    ['2GB', 2 * 2 ** 30], ['2GiB', 2 * 2 ** 30], ['1T', 2 ** 40], [' 3 M ', 3 * 2 ** 20], ['.5K', 512], [4096, 4096],
  ];
  for (const [inp, want] of ok) assert.equal(parseSize(inp), want, String(inp));
  for (const bad of ['', 'G', '1.5X', '-1G', '1,5G', 'iB', '1 G B', 'abc']) {
    assert.throws(() => parseSize(bad, 'ramBytes'), (e: unknown) => isCrawlError(e, 'CRAWL_CONFIG_INVALID') && /ramBytes/.test((e as Error).message), bad);
  }
});

test('parseDurationMs: seconds by default, units accepted', () => {
  const ok: [string, number][] = [['30', 30000], ['1.5', 1500], ['500ms', 500], ['30s', 30000], ['10m', 600000], ['2h', 7200000]];
  for (const [inp, want] of ok) assert.equal(parseDurationMs(inp), want, inp);
  assert.equal(parseDurationMs('250', 'x', 'ms'), 250);
  for (const bad of ['', 'soon', '-3', '3d']) assert.throws(() => parseDurationMs(bad), /CRAWL_CONFIG_INVALID|must be a duration/);
});

test('parseCrawlArgs: every contract flag maps to its config key (table)', () => {
  const cases: [string[], Partial<Record<string, unknown>>][] = [
    [['--state', 's'], { stateDir: '/tmp/x/s' }],
    [['--out=o'], { outDir: '/tmp/x/o' }],
    [['--dns-server', '127.0.0.1:5353'], { dnsServers: ['127.0.0.1:5353'] }],
    [['--dns-server', '127.0.0.1'], { dnsServers: ['127.0.0.1:53'] }],
    [['--dns-server', '::1'], { dnsServers: ['[::1]:53'] }],
    [['--dns-server', '[::1]:5353'], { dnsServers: ['[::1]:5353'] }],
    [['--user-agent', 'bot/1 (+http://x)'], { userAgent: 'bot/1 (+http://x)' }],
    [['--max-pages', '100'], { maxPages: 100 }],
    [['--max-time', '90'], { maxTimeMs: 90000 }],
    [['--max-time', '2m'], { maxTimeMs: 120000 }],
    [['--max-depth', '3'], { maxDepth: 3 }],
    [['--scope', 'pld'], { scope: 'pld' }],
    [['--include', 'a', '--include', 'b'], { include: ['a', 'b'] }],
    [['--exclude', '\\.pdf$'], { exclude: ['\\.pdf$'] }],
    [['--host-delay', '2000', '--ip-delay', '300'], { hostDelayMs: 2000, ipDelayMs: 300 }],
    [['--host-delay', '0', '--ip-delay', '0', '--min-host-delay', '0', '--min-ip-delay', '0'], { hostDelayMs: 0, ipDelayMs: 0, minHostDelayMs: 0, minIpDelayMs: 0 }],
    [['--ram', '1.5G'], { ramBytes: 1.5 * 2 ** 30 }],
    [['--workers', '3'], { workers: 3 }],
    [['--warc-compression', 'zstd'], { warcCompression: 'zstd' }],
    [[], { warcZstdLevel: 3, warcZstdDictionary: 'train' }],
    [['--warc-zstd-level', '1', '--warc-zstd-dictionary', 'off'], { warcZstdLevel: 1, warcZstdDictionary: 'off' }],
    [['--warc-zstd-level=22', '--warc-zstd-dictionary', 'd/html.dict'], { warcZstdLevel: 22, warcZstdDictionary: '/tmp/x/d/html.dict' }],
    [['--status-port', '0'], { statusPort: 0 }],
    [['--images'], { images: true }],
    [['http://a.test/', '--max-pages', '5', 'http://b.test/x'], { seeds: ['http://a.test/', 'http://b.test/x'], maxPages: 5 }],
    [['--', '--weird'], {}],
  ];
  for (const [argv, want] of cases) {
    if (argv.includes('--weird')) {
      assert.throws(() => cfg(argv), /seeds entries must be absolute/);
      continue;
    }
    const c = cfg(argv) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(want)) assert.deepEqual(c[k], v, `${argv.join(' ')} → ${k}`);
  }
});

test('parseCrawlArgs: precise errors with CRAWL_CONFIG_INVALID (table)', () => {
  const cases: [string[], RegExp][] = [
    [['--bogus'], /--bogus is not a known flag/],
    [['-x'], /-x is not a known flag/],
    [['--max-pages'], /--max-pages needs a value <n>/],
    [['--max-pages', 'ten'], /maxPages must be a non-negative integer/],
    [['--scope', 'world'], /scope must be one of any, pld, host/],
    [['--warc-compression', 'brotli'], /warcCompression must be one of gzip, zstd, none/],
    [['--warc-zstd-level', '0'], /warcZstdLevel must be a positive integer/],
    [['--warc-zstd-level', '23'], /warcZstdLevel must be an integer from 1 to 22/],
    [['--warc-zstd-level', 'fast'], /warcZstdLevel must be a non-negative integer/],
    [['--warc-zstd-dictionary', ''], /warcZstdDictionary must be a non-empty string/],
    [['--ram', 'lots'], /ramBytes must be a size like/],
    [['--ram', '10M'], /ramBytes must be at least 256M/],
    [['--ram', '128M'], /ramBytes must be at least 256M.*the process itself needs more/],
    [['--workers', '0'], /workers must be a positive integer/],
    [['--include', '(unclosed'], /include has an invalid regular expression/],
    [['--host-delay', '100', '--min-host-delay', '200'], /minHostDelayMs \(τh0 = 200\) must not exceed hostDelayMs/],
    [['--ip-delay', '10', '--min-ip-delay', '50'], /minIpDelayMs \(τs0 = 50\) must not exceed ipDelayMs/],
    [['ftp://x.test/'], /seeds entries must be absolute http\(s\) URLs/],
    [['--dns-server', 'a:b:c'], /dnsServers entries must be an IP address with an optional port/],
    [['--status-port', '70000'], /statusPort must be ≤ 65535/],
    [['--user-agent', ''], /userAgent must be a non-empty string/],
    [['--user-agent', 'mybot'], /userAgent must contain a contact URL/],
    [['--dns-server', 'nonsense'], /dnsServers entries must be an IP address/],
    [['--dns-server', 'dns.example:53'], /dnsServers entries must be an IP address/],
    [['--dns-server', '127.0.0.1:0'], /dnsServers entries must be an IP address/],
    [['http://'], /seeds entries must be absolute http\(s\) URLs/],
    [['http://a b.test/'], /seeds entries must be absolute http\(s\) URLs/],
  ];
  for (const [argv, re] of cases) {
    assert.throws(() => cfg(argv), (e: unknown) => {
      assert.ok(isCrawlError(e, 'CRAWL_CONFIG_INVALID'), `${argv.join(' ')}: ${String(e)}`);
      assert.match((e as Error).message, re, argv.join(' '));
      return true;
    });
  }
});

test('defaults are valid, frozen, and documented units', () => {
  const c = resolveCrawlConfig({}, { cwd });
  assert.equal(c.stateDir, '/tmp/x/crawl-state');
  assert.equal(c.ramBytes, 1.5 * 2 ** 30);
  assert.ok(c.minHostDelayMs <= c.hostDelayMs && c.minIpDelayMs <= c.ipDelayMs);
  assert.ok(Object.isFrozen(c));
  assert.throws(() => resolveCrawlConfig({ hostDelay: 5 } as never), /hostDelay is not a known option/);
});

test('every flag in the table parses into a real config key', () => {
  const keys = new Set(Object.keys(resolveCrawlConfig({}, { cwd })));
  for (const f of CRAWL_FLAGS) if (f.key !== 'config') assert.ok(keys.has(f.key), f.name);
});

test('config file: flag names or config keys; flags override the file; seeds file appended', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-cfg-'));
  await writeFile(path.join(dir, 'c.json'), JSON.stringify({ 'host-delay': '250', ipDelayMs: 40, ram: '256M', 'dns-server': '127.0.0.1:9', scope: 'host', 'min-ip-delay': 10, 'min-host-delay': 10 }));
  await writeFile(path.join(dir, 'seeds.txt'), '# seeds\nhttp://a.test/\n\n  http://b.test/  \n');
  const c = await loadCrawlConfig(['--config', 'c.json', '--seeds', 'seeds.txt', '--scope', 'pld', 'http://z.test/'], { cwd: dir });
  assert.equal(c.hostDelayMs, 250);
  assert.equal(c.ipDelayMs, 40);
  assert.equal(c.ramBytes, 256 * 2 ** 20);
  assert.deepEqual(c.dnsServers, ['127.0.0.1:9']);
  assert.equal(c.scope, 'pld');
  assert.deepEqual(c.seeds, ['http://z.test/', 'http://a.test/', 'http://b.test/']);
  await writeFile(path.join(dir, 'bad.json'), '{ nope');
  await assert.rejects(loadCrawlConfig(['--config', 'bad.json'], { cwd: dir }), /could not be read as JSON/);
  assert.throws(() => configFromFileObject({ 'hots-delay': 1 }), /hots-delay in config file is not a known option/);
  assert.throws(() => configFromFileObject([1]), /must hold a JSON object/);
  assert.deepEqual(parseSeedList('a\r\n#b\n c \n'), ['a', 'c']);
});

test('config file: `seeds` is the seed URL list (the config key), `seedsFile` the file; flag values must be scalars', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dc-cfg-'));
  await writeFile(path.join(dir, 's.txt'), 'http://f.test/\n');
  await writeFile(path.join(dir, 'c.json'), JSON.stringify({ seeds: ['http://a.test/'], seedsFile: 's.txt' }));
  const c = await loadCrawlConfig(['--config', 'c.json', 'http://z.test/'], { cwd: dir });
  assert.deepEqual(c.seeds, ['http://z.test/', 'http://f.test/'], 'argv seeds replace the file\'s list; the seeds file is appended');
  const f = await loadCrawlConfig(['--config', 'c.json'], { cwd: dir });
  assert.deepEqual(f.seeds, ['http://a.test/', 'http://f.test/']);
  // The only name that is both a config key and a flag for another key (a new one would need the same rule).
  const keys = new Set(Object.keys(defaultCrawlConfig()));
  assert.deepEqual(CRAWL_FLAGS.filter((fl) => keys.has(fl.name) && fl.key !== fl.name).map((fl) => fl.name), ['seeds']);
  // A flag's value that String() cannot convert (found by the property test below): a clear error.
  for (const v of [{ toString: false }, {}, null, [1, 2]]) {
    assert.throws(() => configFromFileObject({ ram: v }), (e: unknown) => isCrawlError(e, 'CRAWL_CONFIG_INVALID') && /ram in config file must be a string or a number/.test((e as Error).message));
  }
  assert.throws(() => configFromFileObject({ include: [{ toString: false }] }), /include in config file must be a string or a number/);
  assert.throws(() => resolveCrawlConfig(configFromFileObject({ seeds: { toString: false } })), /seeds must be a list of strings/);
});

test('runtime options: only RUNTIME_KEYS may change, re-validated', () => {
  const c = resolveCrawlConfig({ hostDelayMs: 1000, minHostDelayMs: 100 }, { cwd });
  const c2 = applyRuntimeChange(c, { hostDelayMs: 2000, paused: true });
  assert.equal(c2.hostDelayMs, 2000);
  assert.equal(c2.paused, true);
  assert.equal(c2.stateDir, c.stateDir);
  assert.throws(() => applyRuntimeChange(c, { stateDir: '/elsewhere' }), /stateDir cannot be changed while a crawl runs/);
  assert.throws(() => applyRuntimeChange(c, { hostDelayMs: 50 }), /must not exceed hostDelayMs/);
  assert.ok(RUNTIME_KEYS.includes('ipDelayMs'));
});

test('robustness (property): any junk config object, runtime change, config file or argv → a config or CRAWL_CONFIG_INVALID, never another error', () => {
  const keys = Object.keys(defaultCrawlConfig());
  const junk = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.string(), fc.boolean(),
    fc.array(fc.string(), { maxLength: 3 }), fc.object({ maxDepth: 1 }), fc.constantFrom(NaN, -1, Infinity, '1e999', '256M', '5s'));
  const onlyConfigErrors = (f: () => unknown): void => {
    try {
      f();
    } catch (e) {
      assert.ok(isCrawlError(e, 'CRAWL_CONFIG_INVALID'), `${(e as Error).name}: ${(e as Error).message}`);
      assert.ok((e as Error).message.length > 10, 'a message that says what is wrong');
    }
  };
  fc.assert(fc.property(fc.dictionary(fc.constantFrom(...keys), junk, { maxKeys: 4 }), (o) => {
    onlyConfigErrors(() => resolveCrawlConfig(o as CrawlConfigInput));
    onlyConfigErrors(() => applyRuntimeChange(resolveCrawlConfig({}), o));
    onlyConfigErrors(() => configFromFileObject(o));
  }), { numRuns: 400 });
  const flag = fc.constantFrom('--ram', '--concurrency', '--host-delay', '--min-ip-delay', '--max-time', '--scope', '--state', '-x', '--',
    '--workers', '--user-agent', '--include', '--budget', '--checkpoint-interval', '--warc-compression');
  fc.assert(fc.property(fc.array(fc.oneof(flag, fc.string()), { maxLength: 6 }), (argv) => onlyConfigErrors(() => parseCrawlArgs(argv))), { numRuns: 400 });
});

test('ramFloorWarning: budgets below the measured floor are named at start; 512M and more are not', async () => {
  const { ramFloorWarning, MIN_RAM_BYTES, RSS_HELD_FROM_MIB } = await import('../../src/config/config.js');
  assert.match(ramFloorWarning({ ramBytes: MIN_RAM_BYTES }) ?? '', /--ram 256M is below what this process has been measured to stay under \(512M\)/);
  assert.match(ramFloorWarning({ ramBytes: 511 * 2 ** 20 }) ?? '', new RegExp(`\\(${RSS_HELD_FROM_MIB}M\\)`));
  assert.equal(ramFloorWarning({ ramBytes: 512 * 2 ** 20 }), null);
  assert.equal(ramFloorWarning({ ramBytes: 2 ** 30 }), null);
  assert.equal(ramFloorWarning({ ramBytes: 1.5 * 2 ** 30 }), null);
});
