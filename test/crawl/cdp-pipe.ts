/**
 * Headless Chromium driven over the DevTools protocol through a pipe (`--remote-debugging-pipe`:
 * the browser reads NUL-terminated JSON commands on its fd 3 and writes replies and events on its
 * fd 4), so a test can load a page, evaluate script in it, click and take a screenshot with no
 * WebSocket client and no npm dependency.
 *
 * `launchChromium()` throws a clear error when no Chromium binary is found (Debian: `apt-get install
 * chromium`; .ci/run installs it): a browser test must fail, not pass, where it cannot run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** The first Chromium on PATH (or $CHROMIUM), or null. */
export function findChromium(): string | null {
  for (const bin of [process.env.CHROMIUM, ...CANDIDATES]) {
    if (bin === undefined || bin === '') continue;
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 120_000 });
    if (r.status === 0 && /chrom/i.test(r.stdout)) return bin;
  }
  return null;
}

interface Pending {
  resolve(v: Record<string, unknown>): void;
  reject(e: Error): void;
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners: { method: string; fn: (params: Record<string, unknown>, sessionId?: string) => void }[] = [];
  private buf = '';
  private exited = false;

  constructor(private readonly child: ChildProcess, private readonly userDir: string) {
    const out = child.stdio[4] as Readable;
    out.setEncoding('utf8');
    out.on('data', (d: string) => {
      this.buf += d;
      for (let i = this.buf.indexOf('\0'); i >= 0; i = this.buf.indexOf('\0')) {
        const msg = JSON.parse(this.buf.slice(0, i)) as { id?: number; result?: Record<string, unknown>; error?: { message: string }; method?: string; params?: Record<string, unknown>; sessionId?: string };
        this.buf = this.buf.slice(i + 1);
        if (msg.id !== undefined) {
          const p = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          if (msg.error !== undefined) p?.reject(new Error(`CDP: ${msg.error.message}`));
          else p?.resolve(msg.result ?? {});
        } else if (msg.method !== undefined) {
          for (const l of this.listeners) if (l.method === msg.method) l.fn(msg.params ?? {}, msg.sessionId);
        }
      }
    });
    child.on('exit', () => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error('chromium exited'));
      this.pending.clear();
    });
  }

  /**
   * One DevTools command (to a page when `sessionId` is given); rejects after `timeoutMs` (a bound
   * on a hang: Chromium on a loaded box answers slowly, never wrongly).
   */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string, timeoutMs = 120_000): Promise<Record<string, unknown>> {
    if (this.exited) return Promise.reject(new Error('chromium exited'));
    const id = this.nextId++;
    const msg = JSON.stringify({ id, method, params, ...(sessionId !== undefined ? { sessionId } : {}) });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`CDP ${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      (this.child.stdio[3] as Writable).write(msg + '\0');
    });
  }

  on(method: string, fn: (params: Record<string, unknown>, sessionId?: string) => void): void {
    this.listeners.push({ method, fn });
  }

  /** A new page (tab) of the given viewport size; returns its session. */
  async newPage(width: number, height: number): Promise<Page> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const page = new Page(this, sessionId);
    await page.send('Page.enable');
    await page.send('Runtime.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    return page;
  }

  /** Close the browser (SIGKILL after 3 s) and remove its profile directory. */
  async close(): Promise<void> {
    if (!this.exited) {
      const gone = new Promise((r) => this.child.once('exit', r));
      this.send('Browser.close').catch(() => undefined);
      const t = setTimeout(() => this.child.kill('SIGKILL'), 3000);
      await gone;
      clearTimeout(t);
    }
    rmSync(this.userDir, { recursive: true, force: true });
  }
}

export class Page {
  constructor(readonly browser: Browser, readonly sessionId: string) {}

  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.browser.send(method, params, this.sessionId);
  }

  /** Navigate and wait for the load event. */
  async goto(url: string): Promise<void> {
    const loaded = new Promise<void>((resolve) => this.browser.on('Page.loadEventFired', (_p, s) => { if (s === this.sessionId) resolve(); }));
    const r = (await this.send('Page.navigate', { url })) as { errorText?: string };
    if (r.errorText !== undefined) throw new Error(`navigation to ${url} failed: ${r.errorText}`);
    await loaded;
  }

  /** Evaluate an expression in the page (promises awaited) and return its value. */
  async eval<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: T }; exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails !== undefined) throw new Error(`page script: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value as T;
  }

  /** Evaluate `predicate` every 100 ms until it is truthy (timeoutMs bounds a hang, not a speed). */
  async waitFor(predicate: string, timeoutMs = 300_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!(await this.eval<boolean>(`Boolean(${predicate})`))) {
      if (Date.now() > end) throw new Error(`page: ${predicate} not true within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** A PNG of the viewport. */
  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
    return Buffer.from(data, 'base64');
  }
}

/** Start headless Chromium with a fresh profile; throws when no Chromium is installed. */
export function launchChromium(): Browser {
  const bin = findChromium();
  if (bin === null) {
    throw new Error('no Chromium found (tried $CHROMIUM, ' + CANDIDATES.join(', ') + '): install it, e.g. `apt-get install -y chromium` on Debian (.ci/run does)');
  }
  const userDir = mkdtempSync(path.join(os.tmpdir(), 'dc-chromium-'));
  const args = [
    '--headless', '--remote-debugging-pipe', `--user-data-dir=${userDir}`, '--no-first-run', '--no-default-browser-check',
    '--disable-gpu', '--disable-extensions', '--disable-background-networking', '--disable-sync', '--mute-audio',
    '--hide-scrollbars', '--font-render-hinting=none', 'about:blank',
  ];
  // Chromium's sandbox refuses to run as root; a test container often is root.
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  (child.stdio[2] as Readable).resume(); // its log on stderr is not needed; keep the pipe drained
  return new Browser(child, userDir);
}
