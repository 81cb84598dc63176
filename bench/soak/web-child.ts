/**
 * simweb in its own process for bench/soak, with a request log that keeps every request however
 * long the soak runs (simweb's own log is a ring of 200,000 entries): one line per request,
 *
 *   <start ms>\t<end ms>\t<status>\t<host>\t<path>\n
 *
 * (simweb's clock: performance.timeOrigin + performance.now(), i.e. Unix ms), appended to the file
 * the parent names in blocks of 64 KiB and at least once a second, so the judge reads the whole
 * history afterwards while this process stays small.
 *
 * argv: <params JSON> <log file>. IPC: the child sends {ready, dnsServer, httpPort, seeds, ips};
 * {cmd:'count'} answers {requests, robots, pages}; {cmd:'close'} closes the servers, flushes the file,
 * answers {closed, ...counts} and ends the child.
 */
import * as fs from 'node:fs';
import { startSimweb, isRobotsPath, type RequestLogEntry, type WebParams } from '../../src/simweb/index.js';

const params = JSON.parse(process.argv[2]!) as Partial<WebParams>;
const file = process.argv[3]!;
// The ring itself is kept tiny: every entry is seen by the wrapper below before the ring drops it.
const web = await startSimweb({ preset: 'bench', params, log: true, logCapacity: 1024 });

const fd = fs.openSync(file, 'w');
let pending: string[] = [];
let pendingChars = 0;
const counts = { requests: 0, robots: 0, pages: 0 };

function flush(): void {
  if (pending.length === 0) return;
  fs.writeSync(fd, pending.join(''));
  pending = [];
  pendingChars = 0;
}
setInterval(flush, 1000).unref();

const add = web.log.add.bind(web.log);
web.log.add = (e: RequestLogEntry): void => {
  counts.requests++;
  if (isRobotsPath(e.path)) counts.robots++;
  else counts.pages++;
  const line = `${Math.round(e.start)}\t${Math.round(e.end)}\t${e.status}\t${e.host}\t${e.path}\n`;
  pending.push(line);
  pendingChars += line.length;
  if (pendingChars >= 1 << 16) flush();
  add(e);
};

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'count') {
    flush();
    process.send!({ ...counts });
  } else if (m.cmd === 'close') {
    void web.close().then(() => {
      flush();
      fs.closeSync(fd);
      process.send!({ closed: true, ...counts }, () => process.exit(0));
    });
  }
});
process.send!({ ready: true, dnsServer: web.dnsServer, httpPort: web.httpPort, seeds: web.seeds, ips: web.ips.length });
