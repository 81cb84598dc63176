/**
 * Child process for restart.test.ts: runs a frontier on disk as the pipeline would (admit durably,
 * refill, robots, release, fetchDone, periodic commit) and logs to stdout (a pipe: each write is
 * synchronous on Linux, so a line printed before SIGKILL is seen by the parent):
 *   A first last   URLs first..last were admitted and are durable (admit() or commitAdmits() resolved)
 *   D id           URL id was fetched (fetchDone)
 *   S              commit() took its RAM snapshot (once it is durable, URLs fetched before this
 *                  line may be gone); releases and fetch ends go on during the rest of the commit
 *   C              commit() resolved
 */
import { Frontier, FrontierUrl, UrlKind } from '../../src/frontier/index.js';
import { fastOptions } from './fast-options.js';

const [dir, seedArg] = process.argv.slice(2);
const seed = Number(seedArg ?? 1);
let now = 1_000;
const f = await Frontier.open(dir!, fastOptions({ ramUrls: 300, maxUrlsPerHost: 20, disk: { compression: seed % 2 ? 'zstd' : 'none', blockBytes: 4096 }, beast: { initialQueues: 2, maxQueues: 16 } }), () => now);
const out: string[] = [];
const w = (s: string): void => {
  process.stdout.write(s + '\n');
};
w('READY');
let id = 0;
const hosts = 200;
for (let round = 0; ; round++) {
  if (round % 3 === 0) {
    // Odd seeds: durable admits. Even seeds: the pipeline's scheme — chunks admitted with
    // { durable: false }, then one commitAdmits() running concurrently with a refill (which may
    // read and retire a queue whose appends are not synced yet); 'A' only once it resolved.
    const first = id;
    const durable = seed % 2 === 1;
    for (let chunk = 0; chunk < 3; chunk++) {
      const batch: FrontierUrl[] = [];
      for (let k = 0; k < 50; k++, id++) {
        const h = (id * 7 + seed) % hosts;
        const pld = h % 40;
        batch.push(new FrontierUrl({ url: `http://h${h}.p${pld}.test/u${id}`, hostHi: 0x10000 + h, hostLo: h, pldHi: pld, pldLo: 1, budget: 5, admitted: Math.floor(id / 40) + 1 }));
      }
      await f.admit(batch, { durable });
    }
    if (!durable) {
      const c = f.commitAdmits();
      await f.refill();
      await c;
    }
    w(`A ${first} ${id - 1}`);
  }
  await f.refill();
  for (const r of f.takeRobotsRequests(1000)) f.scheduleRobotsFetch(r.hostHi, r.hostLo, `10.0.0.${r.hostLo % 50}`);
  for (const u of f.nextReady(now, 1000)) {
    if (u.kind === UrlKind.Robots) {
      f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
      f.fetchDone(u);
    } else {
      f.fetchDone(u);
      out.push(u.url.slice(u.url.lastIndexOf('/u') + 2));
    }
  }
  if (out.length > 0) {
    w(out.map((x) => `D ${x}`).join('\n'));
    out.length = 0;
  }
  if (round % 7 === 6) {
    // As the crawler's periodic checkpoint does (checkpoint-stage.ts): releases and fetch ends
    // stop only until the RAM snapshot is taken, and go on while the rest of the commit is written
    // (no refill meanwhile: the crawler's frontier port runs refills one at a time with commits).
    let released = false;
    const commit = f.commit({
      snapshotTaken: () => {
        w('S');
        released = true;
      },
      beforeSwitch: () => new Promise((r) => setTimeout(r, 2)),
    }).then(() => true);
    const turn = (): Promise<boolean> => new Promise((r) => setImmediate(() => r(false)));
    while (!(await Promise.race([commit, turn()]))) {
      if (!released) continue;
      for (const u of f.nextReady(now, 20)) {
        if (u.kind === UrlKind.Robots) f.robotsKnown(u.hostHi, u.hostLo, { rules: null, ip: u.ip, expiresAt: Infinity });
        else w(`D ${u.url.slice(u.url.lastIndexOf('/u') + 2)}`);
        f.fetchDone(u);
      }
      now += 5;
    }
    w('C');
  }
  now += 25;
}
