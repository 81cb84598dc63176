/**
 * Worker thread of the crash test: checks the invariants of crash states (copies of crashed
 * repositories) while the next children run. In a thread, not in the test's main thread, because
 * that synchronous work would hold the event loop and the kill timers would fire late; one
 * long-lived thread, because JIT-compiled checking code is ~5× cheaper than a fresh process's.
 */
import { parentPort } from 'node:worker_threads';
import { verifyCrashed, type VerifyRequest } from './crash-common.js';

const port = parentPort!;
// One at a time: requests queue here in arrival order.
let chain = Promise.resolve();
port.on('message', (m: VerifyRequest) => {
  chain = chain.then(async () => {
    try {
      await verifyCrashed(m.slot, m.copy, m.epochs);
      port.postMessage({ id: m.id, ok: true });
    } catch (e) {
      port.postMessage({ id: m.id, ok: false, error: (e as Error).message });
    }
  });
});
