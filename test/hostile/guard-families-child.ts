/**
 * Runs inside a private network namespace (guard-families.test.ts makes it): every address below
 * is on this namespace's own loopback interface, so nothing leaves it. One HTTP server listens on
 * the dual-stack wildcard and logs the local address of every connection; a small DNS server
 * answers A and AAAA records that point at special-purpose addresses; the real command line
 * (src/cli/main.ts) crawls a seed page on the one allowed IPv4 address, which links to every
 * special-purpose address in every spelling. Prints one JSON line: the server's log, the crawl's
 * exit status and its crawl.log.
 */
import http from 'node:http';
import dgram from 'node:dgram';
import net from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { cliArgv } from '../e2e/harness.js';

const UA = 'drumcrawl-test/0.1 (+https://example.test/bot)';

/** The allowed IPv4 /32 that serves the seed page. */
export const SEED_V4 = '10.9.9.9';
/** One address of each IPv4 special-purpose range that can carry a TCP connection here. */
export const TRAP_V4 = ['0.0.0.0', '10.0.0.1', '100.64.0.1', '127.0.0.1', '127.0.0.2', '169.254.169.254', '172.16.0.1', '192.0.0.9', '192.0.2.1',
  '192.88.99.1', '192.168.0.1', '198.18.0.1', '198.51.100.1', '203.0.113.1'];
/** Ranges no TCP connection can reach (multicast, reserved, broadcast): judged by crawl.log alone. */
export const UNREACHABLE_V4 = ['224.0.0.1', '240.0.0.1', '255.255.255.255'];
/** IPv6 special-purpose addresses (run 2: an IPv4 allowance of everything must open none). */
export const TRAP_V6 = ['::1', 'fd00::1', 'fc00::7', '100::1', '2001:db8::1', '2001:2::1', '3fff::1'];

const hex = (v4: string): string => {
  const b = v4.split('.').map(Number);
  return `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
};
/** The IPv6 spellings that carry an IPv4 address (their addresses are put on lo by the test too). */
export const carriers = (v4: string): string[] => [`::ffff:${v4}`, `64:ff9b::${hex(v4)}`, `2002:${hex(v4)}::1`, `::${hex(v4)}`, `64:ff9b:1::${hex(v4)}`];

interface Hit { local: string; host: string; path: string }

function qname(msg: Buffer): { name: string; qtype: number; end: number } | null {
  let pos = 12;
  const labels: string[] = [];
  while (pos < msg.length) {
    const len = msg[pos]!;
    if (len === 0) { pos++; break; }
    labels.push(msg.subarray(pos + 1, pos + 1 + len).toString('latin1'));
    pos += 1 + len;
  }
  if (pos + 4 > msg.length) return null;
  return { name: labels.join('.').toLowerCase(), qtype: msg.readUInt16BE(pos), end: pos + 4 };
}

function ipBytes(ip: string): Buffer {
  if (net.isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [h, t] = ip.includes('::') ? ip.split('::') as [string, string] : [ip, ''];
  const hs = h === '' ? [] : h.split(':');
  const ts = t === '' ? [] : t.split(':');
  const last = ts.length > 0 ? ts[ts.length - 1]! : hs[hs.length - 1]!;
  const groups = [...hs, ...new Array<string>(8 - hs.length - ts.length - (last.includes('.') ? 1 : 0)).fill('0'), ...ts];
  const out = Buffer.alloc(16);
  let i = 0;
  for (const g of groups) {
    if (g.includes('.')) { Buffer.from(g.split('.').map(Number)).copy(out, i); i += 4; } else { out.writeUInt16BE(parseInt(g, 16), i); i += 2; }
  }
  return out;
}

/** A and AAAA answers: `a<i>.test` A TRAP_V4[i]; `m<i>.test` AAAA ::ffff:TRAP_V4[i] (and no A). */
async function dnsServer(): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    const q = qname(msg);
    if (q === null) return;
    const m = /^([am])(\d+)\.test$/.exec(q.name);
    const v4 = m === null ? undefined : TRAP_V4[Number(m[2])];
    let rr: Buffer | null = null;
    if (v4 !== undefined && m![1] === 'a' && q.qtype === 1) rr = ipBytes(v4);
    if (v4 !== undefined && m![1] === 'm' && q.qtype === 28) rr = ipBytes(`::ffff:${v4}`);
    const h = Buffer.alloc(12);
    msg.copy(h, 0, 0, 2);
    h.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | (v4 === undefined ? 3 : 0), 2);
    h.writeUInt16BE(1, 4);
    h.writeUInt16BE(rr === null ? 0 : 1, 6);
    const parts: Buffer[] = [h, msg.subarray(12, q.end)];
    if (rr !== null) {
      const a = Buffer.alloc(12);
      a.writeUInt16BE(0xc00c, 0);
      a.writeUInt16BE(q.qtype, 2);
      a.writeUInt16BE(1, 4);
      a.writeUInt32BE(0, 6);
      a.writeUInt16BE(rr.length, 10);
      parts.push(a, rr);
    }
    sock.send(Buffer.concat(parts), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { port: sock.address().port, close: () => sock.close() };
}

function seedPage(port: number, run: 'v6-allow' | 'v4-allow'): string {
  const links: string[] = [];
  const u = (host: string, p: string): string => `http://${net.isIPv6(host) ? `[${host}]` : host}:${port}${p}`;
  if (run === 'v6-allow') {
    TRAP_V4.concat(UNREACHABLE_V4).forEach((v4, i) => {
      links.push(u(v4, '/v4'));
      for (const c of carriers(v4)) links.push(u(c, '/carrier'));
      links.push(u(`a${i}.test`, '/dns-a'), u(`m${i}.test`, '/dns-aaaa-mapped'), u(SEED_V4, `/redirect?to=${encodeURIComponent(u(`::ffff:${v4}`, '/redirected'))}`));
    });
    links.push(u('::1', '/control-v6')); // allowed by ::/0: shows the allowance is in force
  } else {
    for (const v6 of TRAP_V6) links.push(u(v6, '/v6'));
  }
  links.push(u(SEED_V4, '/control-v4'));
  return `<!doctype html><html><body>${links.map((l) => `<a href="${l}">x</a>`).join('\n')}</body></html>`;
}

async function crawlOnce(run: 'v6-allow' | 'v4-allow'): Promise<{ hits: Hit[]; exit: number | null; stderr: string; crawlLog: string }> {
  const hits: Hit[] = [];
  const dns = await dnsServer();
  const server = http.createServer((req, res) => {
    const local = req.socket.localAddress ?? '';
    hits.push({ local, host: req.headers.host ?? '', path: req.url ?? '' });
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/robots.txt') { res.writeHead(404).end(); return; }
    if (url.pathname === '/redirect') { res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end(); return; }
    res.writeHead(200, { 'content-type': 'text/html' }).end(url.pathname === '/' ? seedPage(port, run) : '<html><body>leaf</body></html>');
  });
  await new Promise<void>((r) => server.listen({ host: '::', port: 0, ipv6Only: false }, r));
  const port = (server.address() as net.AddressInfo).port;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'drumcrawl-guard-families-'));
  const allow = run === 'v6-allow' ? ['::/0', `${SEED_V4}/32`] : ['0.0.0.0/0'];
  const args = [...cliArgv(), 'crawl', `http://${SEED_V4}:${port}/`, '--state', path.join(dir, 's'), '--out', path.join(dir, 'o'),
    '--user-agent', UA, '--scope', 'any', '--dns-server', `127.0.0.1:${dns.port}`, '--host-delay', '0', '--ip-delay', '0',
    '--min-host-delay', '0', '--min-ip-delay', '0', '--fetch-timeout', '5000', '--max-time', '60', '--progress', 'none',
    '--workers', '1', '--ram', '512M', ...allow.flatMap((c) => ['--allow-network', c])];
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  const exit = await new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  dns.close();
  let crawlLog = '';
  try { crawlLog = readFileSync(path.join(dir, 'o', 'crawl.log'), 'utf8'); } catch { /* judged by the test */ }
  rmSync(dir, { recursive: true, force: true });
  return { hits, exit, stderr, crawlLog };
}

const out = { v6Allow: await crawlOnce('v6-allow'), v4Allow: await crawlOnce('v4-allow') };
process.stdout.write(`${JSON.stringify(out)}\n`);
