/**
 * Runs simweb in its own process for bench/fetch, so the bench process's CPU time is the client's
 * alone. Sends { httpPort, dnsServer, targets } over IPC, then serves until told to stop.
 */
import { startSimweb } from '../../src/simweb/index.js';

const hostsWanted = Number(process.argv[2] ?? 8);
const sim = await startSimweb({ preset: 'demo', log: false, params: { behaviours: {}, robots: {} } });
const targets: Array<{ url: string; ip: string; host: string }> = [];
const usedIps = new Set<string>();
for (let pld = 0; pld < sim.web.params.plds && usedIps.size < hostsWanted; pld++) {
  const info = sim.web.hostInfo(sim.web.hostName(pld, 0));
  if (info === null || info.behaviour !== 'normal' || info.dns !== 'ok' || usedIps.has(info.ip)) continue;
  usedIps.add(info.ip);
  for (let n = 0; n < info.pages && n < 400; n++) {
    if (sim.web.pageKind(info, n) === 'html') targets.push({ url: `${sim.web.origin(info.name)}/p/${n}`, ip: info.ip, host: info.name });
  }
}
process.send!({ httpPort: sim.httpPort, dnsServer: sim.dnsServer, targets });
process.on('message', (m) => {
  if (m === 'stop') void sim.close().then(() => process.exit(0));
});
