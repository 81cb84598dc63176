/**
 * The static checks `npm test` runs before the suite, side by side: the type check, ESLint,
 * dependency-cruiser and the suite's bundle of the sources (docs/testing.md). tsc and ESLint each
 * build the TypeScript program on one core; one after the other they took about 1.5 minutes of
 * the suite's time on 2 cores. Each check's output is printed whole, in this order, once all have
 * ended; the exit code is 1 when any of them failed.
 */
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'depcruise', 'test:bundle'];

const runs = CHECKS.map((name) => new Promise((resolve) => {
  const child = spawn('npm', ['run', '-s', name], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  child.on('error', (e) => resolve({ name, code: 1, out: `${out}${e.message}\n` }));
  child.on('close', (code) => resolve({ name, code: code ?? 1, out }));
}));

let failed = false;
for (const r of await Promise.all(runs)) {
  process.stdout.write(`> npm run ${r.name}: ${r.code === 0 ? 'ok' : `failed (exit ${r.code})`}\n${r.out}`);
  if (r.code !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
