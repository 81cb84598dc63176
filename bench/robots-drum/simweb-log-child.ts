/**
 * simweb in its own process for bench/robots-drum/crawl.ts, with a request log that keeps every
 * robots.txt request however long the crawl: simweb's own log is a ring of 200,000 entries
 * (src/simweb/request-log.ts), far fewer than a 10^6-host crawl makes. Each robots request (host,
 * server-clock start, status, path, end of its answer) is appended to a file named by the parent (one line each, written in
 * blocks), so the judge reads the whole history after the crawl while this process stays small;
 * page requests are only counted, and each is checked against the robots oracle (a page the host's
 * robots.txt disallows for the crawler's user agent is a robots violation).
 *
 * argv: <params JSON> <robots log file> <user agent>. IPC: the child sends {ready, dnsServer,
 * httpPort, seeds, web: {hosts, pages}}; {cmd:'count'} gets {count, robots, pages, violations};
 * {cmd:'close'} flushes the file, answers {closed, ...counts} and ends the child.
 */
import * as fs from 'node:fs';
import { startSimweb, isRobotsPath, type RequestLogEntry, type WebParams } from '../../src/simweb/index.js';

const params = JSON.parse(process.argv[2]!) as Partial<WebParams>;
const file = process.argv[3]!;
const userAgent = process.argv[4]!;
// The ring itself is kept tiny: every entry is seen by the wrapper below before the ring drops it.
const web = await startSimweb({ preset: 'tiny', params, log: true, logCapacity: 1024 });

const fd = fs.openSync(file, 'w');
let pending: string[] = [];
let pendingChars = 0;
const counts = { count: 0, robots: 0, pages: 0, violations: 0 };
const violations: string[] = []; // the first few, for the report

function flush(): void {
  if (pending.length === 0) return;
  fs.writeSync(fd, pending.join(''));
  pending = [];
  pendingChars = 0;
}
setInterval(flush, 1000).unref();

const add = web.log.add.bind(web.log);
web.log.add = (e: RequestLogEntry): void => {
  counts.count++;
  if (isRobotsPath(e.path)) {
    counts.robots++;
    const line = `${e.host}\t${e.start}\t${e.status}\t${e.path}\t${e.end}\n`;
    pending.push(line);
    pendingChars += line.length;
    if (pendingChars >= 1 << 16) flush();
  } else {
    counts.pages++;
    if (!web.web.robotsAllows(e.host, e.path, userAgent)) {
      counts.violations++;
      if (violations.length < 20) violations.push(`${e.host}${e.path}`);
    }
  }
  add(e);
};

/** Hosts and pages of the finite web (O(hosts): ~1 s at 10^6 hosts). */
function webSize(): { hosts: number; pages: number } {
  let hosts = 0, pages = 0;
  for (let i = 0; i < web.web.params.plds; i++) {
    const hc = web.web.hostCount(i);
    hosts += hc;
    for (let j = 0; j < hc; j++) pages += web.web.pageCount(i, j);
  }
  return { hosts, pages };
}

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'count') {
    process.send!({ ...counts });
  } else if (m.cmd === 'close') {
    void web.close().then(() => {
      flush();
      fs.closeSync(fd);
      process.send!({ closed: true, ...counts, violationSamples: violations }, () => process.exit(0));
    });
  }
});
process.send!({ ready: true, dnsServer: web.dnsServer, httpPort: web.httpPort, seeds: web.seeds, web: webSize() });
