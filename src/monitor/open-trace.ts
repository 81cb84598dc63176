/**
 * Marks of a crawl's opening on stderr (DRUMCRAWL_TRACE_OPEN=1): `open <mark> <ms>` with the ms
 * since the process started (performance.now(): the main thread's time origin), so that a resume's
 * time to its first request can be split into its parts (bench/resume/late.ts reads them). Off, a
 * mark costs one comparison.
 */
const ON = process.env.DRUMCRAWL_TRACE_OPEN !== undefined && process.env.DRUMCRAWL_TRACE_OPEN !== '';

export function openMark(mark: string): void {
  if (ON) process.stderr.write(`open ${mark} ${performance.now().toFixed(0)}\n`);
}

/** `p`, with a mark when it settles. */
export function openMarked<T>(mark: string, p: Promise<T>): Promise<T> {
  if (!ON) return p;
  return p.then((v) => { openMark(mark); return v; });
}
