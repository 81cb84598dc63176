/**
 * One process at a time on a state directory. A second crawl or resume on a state that a live
 * process is crawling would cut its WARC tail, reopen its DRUMs and write checkpoints under it:
 * both runs' state and archive would be damaged. So `Crawler.open` and `Crawler.resume` take the
 * state's lock before they touch anything, and a crawl releases it when it closes.
 *
 * The lock is a Unix socket in Linux's abstract namespace, named by the state directory's device
 * and inode, that the holder listens on. The kernel lets one socket bind a name and frees the name
 * when its process dies, however it dies: a SIGKILL, an OOM kill or a power loss leaves nothing
 * stale to judge or clean up, and two processes racing for a free state get one lock and one
 * EADDRINUSE. The inode follows the directory when it is moved or renamed (still the same crawl)
 * and not into a copy (another crawl, which may run beside it). The holder answers a connection
 * with its pid and start time, which the refusal names.
 *
 * Scope: processes of one machine in one network namespace (abstract names are per namespace).
 * Two machines sharing one state directory over a network file system are not told apart.
 */
import { promises as fsp } from 'node:fs';
import net from 'node:net';
import { CrawlError } from '../errors.js';

/** What the holder answers to a connection to its lock. */
export interface LockHolder {
  pid: number;
  since: string;
}

/** How long a refusal waits for the holder to say who it is (a stalled holder still refuses). */
const ASK_MS = 2000;

export class StateLock {
  private released = false;

  private constructor(private readonly server: net.Server) {}

  /** Take the lock of the existing directory `stateDir`, or throw CRAWL_STATE_LOCKED naming the holder. */
  static async acquire(stateDir: string): Promise<StateLock> {
    const name = await lockName(stateDir);
    const me: LockHolder = { pid: process.pid, since: new Date().toISOString() };
    const server = net.createServer((sock) => {
      sock.on('error', () => undefined);
      sock.end(JSON.stringify(me));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(name, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
      const h = await askHolder(name, true);
      const who = h === null ? 'another drumcrawl process' : `drumcrawl process ${h.pid} (since ${h.since})`;
      throw new CrawlError('CRAWL_STATE_LOCKED', `state ${stateDir} is in use by ${who}; stop it first (SIGINT or POST /stop), or wait for it to end`);
    }
    // The lock must not keep a finished process alive.
    server.unref();
    return new StateLock(server);
  }

  /** Free the lock (idempotent). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The abstract socket name of a state directory: its device and inode (see the top comment). */
export async function lockName(stateDir: string): Promise<string> {
  const st = await fsp.stat(stateDir, { bigint: true });
  return `\0drumcrawl-state-${st.dev}-${st.ino}`;
}

/** Who holds the lock of the existing directory `stateDir` (null: nobody, or no answer within ASK_MS). */
export async function lockHolder(stateDir: string): Promise<LockHolder | null> {
  return askHolder(await lockName(stateDir), false);
}

/**
 * Who holds the lock `name`, as the holder says; null when it does not answer within ASK_MS.
 * `bound` (the name is known to be bound: acquire's EADDRINUSE): a refused connection is asked
 * again until then, since the holder binds the name a moment before it listens and a racer refused
 * by the bind can connect in between (ECONNREFUSED), and the refusal would then not name it.
 */
async function askHolder(name: string, bound: boolean): Promise<LockHolder | null> {
  const deadline = Date.now() + ASK_MS;
  for (;;) {
    const h = await askOnce(name, deadline - Date.now());
    if (h !== 'refused') return h;
    if (!bound) return null;
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One connection to the holder: its answer, null (no answer in `ms`, or not one), or 'refused'. */
async function askOnce(name: string, ms: number): Promise<LockHolder | null | 'refused'> {
  return new Promise((resolve) => {
    let text = '';
    const sock = net.connect(name);
    const done = (h: LockHolder | null | 'refused'): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(h);
    };
    const timer = setTimeout(() => done(null), Math.max(0, ms));
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => { text += d; });
    sock.on('error', (e: NodeJS.ErrnoException) => done(e.code === 'ECONNREFUSED' ? 'refused' : null));
    sock.on('end', () => {
      try {
        const h = JSON.parse(text) as Partial<LockHolder>;
        done(typeof h.pid === 'number' ? { pid: h.pid, since: String(h.since) } : null);
      } catch {
        done(null);
      }
    });
  });
}
