/** Shared CLI plumbing: exit codes, error printing, the end-of-crawl summary. */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { CrawlSummary } from '../../crawl/pipeline.js';

/** Exit codes: 0 done/stopped cleanly, 1 failure, 2 invalid configuration or usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export async function runGuarded(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    const err = e as Error & { code?: string };
    const code = err.code ?? 'CRAWL_ERROR';
    process.stderr.write(`drumcrawl: ${code}: ${err.message}\n`);
    process.exitCode = code === 'CRAWL_CONFIG_INVALID' || code === 'CRAWL_STATE_EXISTS' || code === 'CRAWL_STATE_MISSING' ? EXIT_USAGE : EXIT_FAILURE;
  }
}

/**
 * How to run this CLI again, as the user can type it: `drumcrawl` when that name on PATH is this
 * program; else the launcher beside this build (`<repo>/bin/drumcrawl` in a clone, absolute); else
 * node with this script (e.g. a run through tsx).
 */
export function selfCommand(): string {
  const script = process.argv[1] ?? '';
  const launcher = path.resolve(path.dirname(script), '..', '..', 'bin', 'drumcrawl');
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const p = path.join(dir, 'drumcrawl');
    try {
      if (existsSync(p) && realpathSync(p) === realpathSync(launcher)) return 'drumcrawl';
    } catch {
      // unreadable PATH entry or no launcher beside this build: try the next
    }
  }
  if (existsSync(launcher) && script.endsWith(path.join('dist', 'cli', 'main.js'))) return launcher;
  return [process.execPath, ...process.execArgv, script].map(shellQuote).join(' ');
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function mb(n: number): string {
  return (n / 1e6).toFixed(1) + ' MB';
}

export function printSummary(s: CrawlSummary, out: NodeJS.WritableStream = process.stdout): void {
  const outcomes = Object.entries(s.outcomes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}=${v}`).join(' ');
  out.write(
    [
      `crawl ${s.finished ? 'finished' : 'stopped'} (${s.stopReason}) after ${(s.elapsedMs / 1000).toFixed(1)} s`,
      `  pages fetched   ${s.pages} (${s.pagesPerSec.toFixed(1)} pages/s this run, ${s.cpuMsPerPage === null ? 'no page fetched this run' : `${s.cpuMsPerPage.toFixed(2)} ms CPU/page`})`,
      `  bytes           ${mb(s.bytes)}`,
      `  unique URLs     ${s.urlsSeen}`,
      `  duplicates      ${s.duplicates} (WARC revisit records)`,
      `  outcomes        ${outcomes}`,
      `  peak RSS        ${mb(s.peakRssBytes)}`,
      `  WARC files      ${s.warcDir}`,
      ...s.warcFiles.map((f) => `                  ${f}`),
      `  crawl log       ${s.warcDir}/crawl.log`,
      `  state           ${s.stateDir}${s.finished ? '' : `  (continue with: ${selfCommand()} resume ${shellQuote(s.stateDir)})`}`,
      '',
    ].join('\n'),
  );
}
