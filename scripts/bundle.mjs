/**
 * The second step of `npm run build`: after tsc has compiled src/ to dist/, esbuild bundles the
 * command line (dist/cli/main.js, split at its dynamic imports into main.js and chunk-<hash>.js
 * files) and each worker thread's entry (parse-worker, page-worker, drum-host, archive-host, one
 * file each) in dist/bundle/, which bin/drumcrawl runs.
 *
 * Why: every thread of a crawl loads its modules itself, and Node's ES module loader costs per
 * module (resolve, read, compile, link): the main thread's ~200 modules took ~0.6 s of CPU before
 * the first request, a bundle of the same code ~0.3 s (docs/performance.md "Start-up"). The code
 * is the same tsc output; only the files are joined.
 *
 * The bundles sit side by side, one directory below the package root like dist/cli/: each
 * `import.meta.url`-relative path in the code resolves as it does from dist/cli/main.js (the
 * package.json at ../../, the worker entries `./<name>.js` beside their caller — here the other
 * bundles). Left outside (loaded from node_modules at run time): zstd-napi (a native addon),
 * piscina (it starts its own worker file from its own directory) and undici (src/fetch/fetcher.ts and
 * interim.ts load two of its files by require). nats, the cluster's client, is bundled: it is CommonJS, so
 * esbuild wraps it in a function run at its first use (a cluster command); as an external its
 * import would be hoisted to the bundle's top and loaded by every command. The library
 * (`import 'drumcrawl'`, dist/index.js) stays tsc's unbundled output.
 */
import { build } from 'esbuild';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The entries, by bundle name, as tsc emits them (`from: 'dist'`) or as sources (`from: 'src'`). */
const ENTRIES = {
  main: 'cli/main',
  'parse-worker': 'threads/page/parse-worker',
  'page-worker': 'threads/page/page-worker',
  'drum-host': 'threads/drum/drum-host',
  'archive-host': 'threads/archive/archive-host',
};

/**
 * Bundles the entries of the package at `root` into `outdir` (default `<root>/dist/bundle`). The
 * build bundles tsc's output (`from: 'dist'`); test/cli/bundle.test.ts bundles the sources
 * (`from: 'src'`: esbuild compiles the TypeScript itself) to check the layout without a tsc build.
 */
/** The test suite's child processes bundled beside the CLI for `npm test` (`--test-children`). */
const TEST_ENTRIES = {
  'simweb-child': 'test/e2e/simweb-child.ts',
};

export async function bundle({ root, from = 'dist', outdir = 'dist/bundle', testChildren = false }) {
  const entries = Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, `${from}/${file}.${from === 'src' ? 'ts' : 'js'}`]));
  if (testChildren) Object.assign(entries, TEST_ENTRIES);
  const { main, ...workers } = entries;
  const common = {
    absWorkingDir: root,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['zstd-napi', 'piscina', 'undici'],
    // CommonJS dependencies bundled into an ES module call require() for Node's own modules
    banner: { js: "import { createRequire as __drumcrawlCreateRequire } from 'node:module'; const require = __drumcrawlCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  };
  // The CLI split at its dynamic imports (chunk-<hash>.js beside it): a command loads only the
  // chunks it reaches, and `crawl` does not reach the cluster's code and its NATS client
  // (~0.56 MB), simweb (~0.1 MB) or the other commands' — 1.9 MB of source to decode and
  // pre-parse in one file, ~1.2 MB split (docs/performance.md "Start-up and real pages"). The
  // chunks of an earlier build go first (their names change with their contents).
  const dir = path.resolve(root, outdir);
  if (existsSync(dir)) for (const f of readdirSync(dir)) if (/^chunk-[A-Z0-9]+\.js$/.test(f)) rmSync(path.join(dir, f));
  await build({ ...common, entryPoints: { main }, splitting: true, chunkNames: 'chunk-[hash]' });
  // Each worker thread's entry in one file of its own (a thread loads one module).
  await build({ ...common, entryPoints: workers });
}

// `node scripts/bundle.mjs` bundles tsc's output into dist/bundle (npm run build);
// `node scripts/bundle.mjs --from src --outdir dist/test-bundle --test-children` bundles the sources
// for the test suite (npm test: its CLI children, worker threads and simweb children start from
// there, docs/testing.md).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const opt = (name) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const from = opt('from') ?? 'dist';
  if (from !== 'dist' && from !== 'src') throw new Error(`--from ${from}: dist or src`);
  await bundle({ root: fileURLToPath(new URL('..', import.meta.url)), from, outdir: opt('outdir') ?? 'dist/bundle', testChildren: process.argv.includes('--test-children') });
}
