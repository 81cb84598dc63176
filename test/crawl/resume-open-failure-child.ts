/**
 * Child of resume-open-failure.test.ts: resumes the state named by argv[2] and reports how the
 * opening ended, without process.exit — the process ends only when nothing the failed opening
 * started (threads, files, timers) is left.
 */
import { Crawler } from '../../src/crawl/pipeline.js';

try {
  const c = await Crawler.resume(process.argv[2]!, { maxPages: 1 });
  process.stdout.write('opened\n');
  await c.run();
} catch (e) {
  process.stdout.write(`failed ${(e as { code?: string }).code ?? (e as Error).message}\n`);
}
