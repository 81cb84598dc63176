/** Shared CLI plumbing: exit codes, error printing, the end-of-crawl summary. */
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { CrawlSummary } from '../../crawl/pipeline.js';

/** Exit codes: 0 done/stopped cleanly, 1 failure while running, 2 input refused before the start. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * Codes that mean "the input was refused before anything started" (exit 2): the user has to change
 * a flag, a file or a path. Any other code is a failure of a command that had started (exit 1).
 * docs/errors.md ("Exit status of the command line") lists the same set.
 */
export const USAGE_CODES: ReadonlySet<string> = new Set([
  'CRAWL_CLI_USAGE', 'CRAWL_CONFIG_INVALID', 'CRAWL_DIR_UNUSABLE', 'CRAWL_DIR_FULL',
  'CRAWL_STATE_EXISTS', 'CRAWL_STATE_MISSING', 'CRAWL_STATE_LOCKED', 'CRAWL_OUT_MISSING', 'CRAWL_OUT_UNVERIFIED', 'CRAWL_MANIFEST_INVALID', 'CRAWL_STATE_LINK', 'CRAWL_SIMWEB_BAD_PARAM', 'CRAWL_SIMWEB_LISTEN',
  'CRAWL_CLUSTER_CONFIG',
]);

/** `drumcrawl: <CRAWL_*>: <message>` and the exit status for any thrown value. */
export function describeError(e: unknown): { line: string; exit: number } {
  const err: Error & { code?: unknown } = e instanceof Error ? e : new Error(String(e));
  const own = typeof err.code === 'string' && err.code.startsWith('CRAWL_') ? err.code : null;
  // A system error's message already starts with its own code (ENOTDIR: …): it is printed once,
  // under CRAWL_ERROR, the code of an error the crawler has no code of its own for.
  const code = own ?? 'CRAWL_ERROR';
  const message = err.message.replace(/[\r\n]+/g, ' ');
  return { line: `drumcrawl: ${code}: ${message}\n`, exit: USAGE_CODES.has(code) ? EXIT_USAGE : EXIT_FAILURE };
}

/**
 * Run a command; on an error print one line (never a stack trace) and exit at once with its
 * status. Exiting (rather than setting process.exitCode) matters: a command that failed halfway
 * may hold worker threads or sockets that would keep the process alive.
 */
export async function runGuarded(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    const { line, exit } = describeError(e);
    process.stderr.write(line);
    process.exit(exit);
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
  if (existsSync(launcher) && (script.endsWith(path.join('dist', 'cli', 'main.js')) || script.endsWith(path.join('dist', 'bundle', 'main.js')))) return launcher;
  return [process.execPath, ...process.execArgv, script].map(shellQuote).join(' ');
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The status server's addresses and its control token, printed when it starts. The page's link
 * carries the token in the URL fragment, which the browser keeps to itself (status-page.ts).
 */
export function announceStatusServer(url: string, token: string, stateDir: string): void {
  process.stderr.write(
    `status page: ${url}/#token=${token}\n` +
    `status server: ${url}/status  ${url}/metrics\n` +
      `control token: ${token} (also in ${stateDir}/control-token; POST /pause, /resume, /stop, /config need "Authorization: Bearer <token>")\n`,
  );
}

function mb(n: number): string {
  return (n / 1e6).toFixed(1) + ' MB';
}

/**
 * Run a crawl to its end and print the summary. A crawl stopped by an error rejects (exit 1); its
 * message then also says how to go on: a resume from the last checkpoint, once the cause is fixed.
 */
export async function runAndReport(crawler: { run(): Promise<CrawlSummary>; config: { stateDir: string } }): Promise<void> {
  try {
    printSummary(await crawler.run());
  } catch (e) {
    if (e instanceof Error) e.message += ` (once that is fixed the crawl goes on from its last checkpoint: ${selfCommand()} resume ${shellQuote(crawler.config.stateDir)})`;
    throw e;
  }
}

export function printSummary(s: CrawlSummary, out: NodeJS.WritableStream = process.stdout): void {
  const outcomes = Object.entries(s.outcomes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}=${v}`).join(' ');
  out.write(
    [
      `crawl ${s.finished ? 'finished' : 'stopped'} (${s.stopReason}) after ${(s.elapsedMs / 1000).toFixed(1)} s`,
      `  pages fetched   ${s.pages}${s.requisites > 0 ? ` (${s.requisites} of them page requisites)` : ''} (${s.pagesPerSec.toFixed(1)} pages/s this run, ${s.cpuMsPerPage === null ? 'no page fetched this run' : `${s.cpuMsPerPage.toFixed(2)} ms CPU/page`})`,
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
