/**
 * Entry files for worker threads. Built code (dist/) runs `<name>.js` directly. Under tsx (tests,
 * `npm run bench:*`), worker threads do not inherit tsx's loader on Node 20, so a tiny ESM shim
 * registers tsx in the worker and then imports the .ts module (re-exporting its default export).
 * That costs each thread 0.5–1.0 s of CPU to compile its module graph through tsx's loader, against
 * 0.2–0.4 s for the same sources bundled: `npm test` bundles the sources once
 * (`scripts/bundle.mjs --from src`) and names the directory in DRUMCRAWL_WORKER_BUNDLE, and the
 * standard entries are then taken from there (docs/testing.md, "The suite's own build").
 */
import { existsSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cache = new Map<string, string>();

/**
 * The entry file of the worker module `name` (e.g. 'parse-worker') in the folder of the module at
 * `callerUrl` (the caller's `import.meta.url`): `.ts` under tsx, `.js` in dist/.
 */
export function workerFile(callerUrl: string, name: string): string {
  const bundles = process.env.DRUMCRAWL_WORKER_BUNDLE;
  if (callerUrl.endsWith('.ts') && bundles !== undefined && bundles !== '') {
    const file = path.join(bundles, `${name}.js`);
    if (existsSync(file)) return file;
  }
  return workerFileFor(new URL(`./${name}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl).href);
}

/**
 * The entry file for the worker module at `moduleUrl` (a file: URL of a .js or .ts module whose
 * default export is the worker's handler), e.g. a module that wraps parse-worker.ts.
 */
export function workerFileFor(moduleUrl: string): string {
  const hit = cache.get(moduleUrl);
  if (hit !== undefined) return hit;
  let file: string;
  if (!moduleUrl.endsWith('.ts')) {
    file = fileURLToPath(moduleUrl);
  } else {
    const api = import.meta.resolve('tsx/esm/api');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-worker-'));
    file = path.join(dir, `${path.basename(fileURLToPath(moduleUrl), '.ts')}-shim.mjs`);
    writeFileSync(
      file,
      `import { register } from ${JSON.stringify(api)};\nregister();\nconst m = await import(${JSON.stringify(moduleUrl)});\nexport default m.default;\n`,
    );
  }
  cache.set(moduleUrl, file);
  return file;
}
