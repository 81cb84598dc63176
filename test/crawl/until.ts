import assert from 'node:assert/strict';

/**
 * Wait until `cond` holds: piscina reports a worker's replacement just after the page's answer.
 * `ms` bounds a hang, far above what a loaded box takes (not a speed).
 */
export async function until(cond: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
