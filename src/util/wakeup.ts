/**
 * A sleep that other code can cut short: the scheduler loop sleeps until the frontier's next
 * wake-up time, and any event that may make work available (a fetch finished, URLs admitted, a
 * control command) calls `kick()`.
 */
export class Wakeup {
  private resolve: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private kicked = false;

  /** Resolves after `ms` or at the next kick(), whichever comes first. */
  sleep(ms: number): Promise<void> {
    if (this.kicked) {
      this.kicked = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(() => this.fire(), Math.max(0, ms));
    });
  }

  kick(): void {
    if (this.resolve === null) {
      this.kicked = true;
      return;
    }
    this.fire();
  }

  private fire(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const r = this.resolve;
    this.resolve = null;
    this.kicked = false;
    r?.();
  }
}
