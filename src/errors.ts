/**
 * The one error class of drumcrawl. Every failure the crawler can report carries a stable `code`
 * (`CRAWL_*`), listed with its meaning and policy in docs/errors.md. Match on `code`, never on the
 * message: messages are for people and may change (the undici convention, UND_ERR_*).
 *
 * Each module declares its own codes next to the code that raises them (e.g. src/url/errors.ts);
 * this file only holds the base class, so that no module has to import another one's errors.
 */
export class CrawlError extends Error {
  /** Stable machine-readable code, `CRAWL_<AREA>_<WHAT>`. */
  readonly code: string;
  /** Optional structured context (file name, offset, host …) for logs; never parsed by callers. */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: string,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CrawlError';
    this.code = code;
    this.details = options?.details;
  }
}

/** True when `err` is a CrawlError carrying `code` (or any CrawlError when `code` is omitted). */
export function isCrawlError(err: unknown, code?: string): err is CrawlError {
  return err instanceof CrawlError && (code === undefined || err.code === code);
}
