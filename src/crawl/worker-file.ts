/**
 * Entry files for worker threads. Built code (dist/) runs `<name>.js` directly. Under tsx (tests,
 * `npm run bench:*`), worker threads do not inherit tsx's loader on Node 20, so a tiny ESM shim
 * registers tsx in the worker and then imports the .ts module (re-exporting its default export).
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cache = new Map<string, string>();

export function workerFile(name: string): string {
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  const self = import.meta.url;
  let file: string;
  if (!self.endsWith('.ts')) {
    file = fileURLToPath(new URL(`./${name}.js`, self));
  } else {
    const target = new URL(`./${name}.ts`, self).href;
    const api = import.meta.resolve('tsx/esm/api');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-worker-'));
    file = path.join(dir, `${name}-shim.mjs`);
    writeFileSync(
      file,
      `import { register } from ${JSON.stringify(api)};\nregister();\nconst m = await import(${JSON.stringify(target)});\nexport default m.default;\n`,
    );
  }
  cache.set(name, file);
  return file;
}
