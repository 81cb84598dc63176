/**
 * The build's bundles (scripts/bundle.mjs; bin/drumcrawl runs dist/bundle/main.js): the CLI bundle
 * must find the package above it (its version) and each worker thread's bundle beside it. Bundled
 * here from the sources into a copy of the package's layout (package.json, node_modules,
 * dist/bundle/), then simweb's tiny web is crawled through it to the end, page workers off and on:
 * every thread role must have started from its bundle (parse or page workers, both DRUM threads,
 * the archive thread) and the crawl must end by itself — a worker entry the bundles lack, or one
 * resolved anywhere else, fails the crawl at its start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledPackage, crawlFlags, crawlSettings, forkSimweb, tempDir } from '../e2e/harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', (code) => resolve({ code, out }));
  });
}

test('the bundled CLI finds its package and its worker bundles, and crawls a web to the end', { timeout: 600_000 }, async () => {
  const pkg = await bundledPackage('bundle');
  const main = path.join(pkg, 'dist', 'bundle', 'main.js');

  const version = await run(process.execPath, [main, '--version']);
  assert.equal(version.out.trim(), (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);

  const web = await forkSimweb('tiny');
  try {
    for (const pageWorkers of ['off', 'on'] as const) {
      const dir = await tempDir(`bundle-crawl-${pageWorkers}`);
      const roles = path.join(dir, 'roles');
      const flags = crawlFlags(crawlSettings(web, {
        stateDir: path.join(dir, 'state'), outDir: path.join(dir, 'out'), pageWorkers,
        hostDelayMs: 0, minHostDelayMs: 0, ipDelayMs: 0, minIpDelayMs: 0,
      }));
      const r = await run(process.execPath, [main, 'crawl', ...web.seeds, ...flags], { DRUMCRAWL_THREAD_ROLES: roles });
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /crawl finished \(done\)/, r.out);
      const started = new Set(readFileSync(roles, 'utf8').split('\n').filter((l) => l !== '').map((l) => l.split('\t')[1]!.split(':')[0]!));
      // page workers announce themselves as parse workers (they run the parse worker's code)
      assert.deepEqual([...started].sort(), ['archive', 'drum', 'parse'], `thread roles started with page workers ${pageWorkers}`);
      const log = readFileSync(path.join(dir, 'out', 'crawl.log'), 'utf8').split('\n').filter((l) => l !== '');
      assert.ok(log.length > 20, `crawl.log has ${log.length} lines`);
    }
  } finally {
    await web.close();
  }
});

/**
 * The files a module loads before its code runs: `file` and, transitively, the chunks it imports
 * statically (esbuild's `import … from "./chunk-<hash>.js"` lines; a dynamic import() is not
 * followed — it loads only when the code reaches it).
 */
function staticClosure(dir: string, file: string): string[] {
  const seen = new Set<string>();
  const todo = [file];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    const text = readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/^import\s(?:[^;]*?from\s*)?"\.\/(chunk-[A-Z0-9]+\.js)";?$/gm)) todo.push(m[1]!);
  }
  return [...seen];
}

test('the CLI bundle is split at its dynamic imports: what every command loads holds neither the cluster\'s NATS client nor simweb\'s server', { timeout: 300_000 }, async () => {
  const out = await tempDir('bundle-split');
  const { bundle } = (await import(path.join(ROOT, 'scripts/bundle.mjs'))) as { bundle: (o: { root: string; from: string; outdir: string }) => Promise<void> };
  await bundle({ root: ROOT, from: 'src', outdir: out });
  const loaded = staticClosure(out, 'main.js');
  // esbuild heads each bundled module with a comment naming its source file
  const sources = loaded.flatMap((f) => [...readFileSync(path.join(out, f), 'utf8').matchAll(/^\/\/ ((?:src|node_modules)\/\S+)$/gm)].map((m) => m[1]!));
  assert.ok(sources.some((s) => s.startsWith('src/cli/')), `the CLI's own modules are in main.js's closure: ${loaded.join(', ')}`);
  const unwanted = sources.filter((s) => s.startsWith('node_modules/nats/') || s.startsWith('src/cluster/engine/') || s.startsWith('src/simweb/server'));
  assert.deepEqual(unwanted, [], `modules every command would load (${loaded.join(', ')})`);
  // and they are in the bundle's other chunks, for the commands that import them
  const all = new Set(loaded);
  const rest = readdirSync(out).filter((f) => /^chunk-/.test(f) && !all.has(f));
  assert.ok(rest.some((f) => readFileSync(path.join(out, f), 'utf8').includes('// node_modules/nats/')), 'the NATS client is in a chunk of its own');
});
