/**
 * The crawler's socket writes, for politeness judges of in-process crawls: undici publishes
 * `undici:client:sendHeaders` right before it writes a request's head to its (connected) socket, so
 * its time is when the request left the crawler — the last moment the crawler controls.
 *
 * Why: the server stamps a request when its own event loop reads it. On a loaded box either process
 * can be descheduled for a hundred ms or more between the crawler's write and the server's stamp,
 * and such a delay on the earlier request of a pair shortens the gap the server logs below τ
 * although the crawler wrote the two ≥ τ apart (seen at load 36: writes ≥ 160 ms apart logged
 * 50.8 ms apart). A gap the server logs shorter than τ is therefore judged on the crawler's writes:
 * it is the crawler's fault only if the crawler wrote the two requests less than τ apart (or never
 * wrote one of them, as far as this log knows). Overlapping requests (the second started while the
 * first was still being answered) are never excused.
 */
import diagnostics from 'node:diagnostics_channel';
import type { ViolationEntry } from './simweb-child.js';

interface SendHeaders {
  request: { path: string };
  headers: string;
}

export interface WireLog {
  /** when the crawler wrote host+path's request head (ms, performance.timeOrigin-based), first write */
  at(host: string, path: string): number | undefined;
  /**
   * Of the server's violations (their entries and messages, as web.report gives them), those the
   * crawler's writes do not excuse (see the top comment).
   */
  unexcused(entries: ViolationEntry[][], messages: string[], ms: number): string[];
  stop(): void;
}

/**
 * `starts`: the crawler's own send stamps for requests whose socket write this thread's
 * diagnostics channel does not see — page workers (`--page-workers on`) write from their own
 * threads, and stamp each page's start on the shared clock (performance.timeOrigin-based, as here)
 * in the same synchronous run as the send (page-worker-serve.ts); the crawler's 'dispatch' event
 * carries that stamp. A write seen here wins over it.
 */
export function wireLog(starts?: { on(event: 'dispatch', f: (e: { at: number; url: string }) => void): unknown }): WireLog {
  const writes = new Map<string, number>();
  const started = new Map<string, number>();
  starts?.on('dispatch', (e) => {
    const u = new URL(e.url);
    const key = `${u.hostname.toLowerCase().replace(/^\[|\]$/g, '')}${u.pathname}${u.search}`;
    if (!started.has(key)) started.set(key, e.at);
  });
  const onSend = (m: unknown): void => {
    const { request, headers } = m as SendHeaders;
    const host = /\r\nhost: ([^\r\n:]+)/i.exec(`\r\n${headers}`)?.[1]?.toLowerCase();
    if (host === undefined) return;
    const key = `${host}${request.path}`;
    if (!writes.has(key)) writes.set(key, performance.timeOrigin + performance.now());
  };
  diagnostics.subscribe('undici:client:sendHeaders', onSend);
  const at = (host: string, path: string): number | undefined => writes.get(`${host}${path}`) ?? started.get(`${host}${path}`);
  return {
    at,
    unexcused: (entries, messages, ms) => {
      const out: string[] = [];
      entries.forEach((pair, i) => {
        const [p, c] = pair as [ViolationEntry, ViolationEntry];
        const wp = at(p.host, p.path);
        const wc = at(c.host, c.path);
        if (c.start < p.end || wp === undefined || wc === undefined || wc - wp < ms) {
          out.push(`${messages[i]} (crawler wrote them ${wp === undefined || wc === undefined ? '?' : (wc - wp).toFixed(1)} ms apart)`);
        }
      });
      return out;
    },
    stop: () => diagnostics.unsubscribe('undici:client:sendHeaders', onSend),
  };
}
