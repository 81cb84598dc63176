// Test child: a status server over a fixed snapshot in its own process (so that its file
// descriptors can be counted apart from the test's client sockets). Prints {port, token} as one
// JSON line; exits when its stdin closes (the test's end, or the test process dying).
import { startStatusServer } from '../../src/monitor/status-server.js';
import type { StatusSnapshot } from '../../src/monitor/stats.js';

const idleTimeoutMs = Number(process.argv[2] ?? 1000);
const snapshot = { state: 'running', pages: 1, outcomes: {} } as unknown as StatusSnapshot;
const srv = await startStatusServer(
  { snapshot: () => snapshot, pause: () => undefined, resume: () => undefined, stop: () => undefined },
  0, '127.0.0.1', { idleTimeoutMs, headersTimeoutMs: idleTimeoutMs },
);
process.stdout.write(JSON.stringify({ port: srv.port, token: srv.token }) + '\n');
process.stdin.resume();
process.stdin.on('end', () => void srv.close().then(() => process.exit(0)));
