/** `drumcrawl stats <state> [--json]` — what the last checkpoint says, and whether a crawl runs on it now. */
import type { Command } from 'commander';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CrawlError } from '../../errors.js';
import { runGuarded } from './common.js';

export function registerStatsCommand(program: Command): void {
  program
    .command('stats')
    .description("print a crawl's counters from its last checkpoint")
    .argument('<state>', 'state directory of the crawl')
    .option('--json', 'print the checkpoint manifest as JSON')
    .action(async (state: string, opts: { json?: boolean }) => {
      await runGuarded(async () => {
        const st = await stat(path.resolve(state)).catch(() => null);
        if (st === null || !st.isDirectory()) throw new CrawlError('CRAWL_STATE_MISSING', `${state} is not a state directory`);
        const { readManifest } = await import('../../state/checkpoint.js');
        const { readRobotsTotals } = await import('../../crawl/ports/robots-stage.js');
        const { formatRobotsDrums } = await import('../../monitor/robots-metrics.js');
        const { lockHolder } = await import('../../state/state-lock.js');
        const m = await readManifest(path.resolve(state));
        if (m === null) throw new CrawlError('CRAWL_STATE_MISSING', `${state} holds no checkpoint`);
        const holder = await lockHolder(path.resolve(state));
        if (opts.json) {
          process.stdout.write(JSON.stringify(m, null, 2) + '\n');
          return;
        }
        const c = m.counters;
        let warcBytes = 0;
        let warcFiles = 0;
        try {
          for (const f of await readdir(m.config.outDir)) {
            if (!/\.warc(\.gz|\.zst)?$/.test(f)) continue;
            warcFiles++;
            warcBytes += (await stat(path.join(m.config.outDir, f))).size;
          }
        } catch {
          /* output dir moved: counters still print */
        }
        const outcomes = Object.entries(c.outcomes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}=${v}`).join(' ');
        process.stdout.write(
          [
            `state        ${path.resolve(state)}`,
            `process      ${holder === null ? 'none running on this state' : `crawling as pid ${holder.pid} since ${holder.since}`}`,
            `checkpoint   epoch ${m.epoch} at ${m.writtenAt} (${m.reason})${m.finished ? ', crawl finished' : ''}`,
            `pages        ${c.pages} fetched, ${c.pagesOk} with an HTTP response, ${(c.bytes / 1e6).toFixed(1)} MB`,
            `URLs         ${c.urlsSeen} unique of ${c.urlsDiscovered} discovered; ${m.pending} to re-fetch on resume`,
            `duplicates   ${c.duplicates}`,
            `robots.txt   ${c.robotsFetches} fetches`,
            ...formatRobotsDrums(readRobotsTotals(path.resolve(state))),
            `crawl time   ${(c.crawlMs / 1000).toFixed(1)} s${c.pages > 0 ? `, ${((c.pages * 1000) / Math.max(1, c.crawlMs)).toFixed(1)} pages/s` : ''}`,
            `outcomes     ${outcomes || '-'}`,
            `WARC         ${warcFiles} files, ${(warcBytes / 1e6).toFixed(1)} MB in ${m.config.outDir}`,
            '',
          ].join('\n'),
        );
      });
    });
}
