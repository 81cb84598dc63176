/**
 * The network guard judges each address family by its own rules, in a real crawl over real
 * sockets, inside a private network namespace made for the test (`unshare -n`; `-rn` when not
 * root; `ip` from Debian's iproute2, installed by .ci/run). Every special-purpose IPv4 address the
 * child serves on is put on the namespace's loopback interface, together with the IPv6 addresses
 * that carry it (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16, IPv4-compatible ::/96,
 * local-use NAT64 64:ff9b:1::/48), so a connection the guard let through would reach the child's
 * server and be logged there.
 *
 * Run 1: `--allow-network ::/0 --allow-network 10.9.9.9/32`; the seed page on 10.9.9.9 links to
 * every trap in every spelling, to DNS names whose A or AAAA answer points at it, and to redirects
 * to it. The server must see requests on 10.9.9.9 and ::1 (the IPv6 allowance is in force) and on
 * no other address; crawl.log records each trap URL as CRAWL_FETCH_BLOCKED_ADDRESS.
 * Run 2: `--allow-network 0.0.0.0/0`; the seed page links to IPv6 special-purpose addresses: the
 * server must see none of them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { shq } from '../e2e/harness.js';
import { SEED_V4, TRAP_V4, TRAP_V6, UNREACHABLE_V4, carriers } from './guard-families-child.js';

const CHILD = fileURLToPath(new URL('./guard-families-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

interface Hit { local: string; host: string; path: string }
interface Run { hits: Hit[]; exit: number | null; stderr: string; crawlLog: string }

/** `::ffff:a.b.c.d` (how a dual-stack socket reports an IPv4 peer) as `a.b.c.d`. */
const plain = (a: string): string => a.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');

test('guard in a network namespace: ::/0 opens no IPv4 special-purpose range, 0.0.0.0/0 no IPv6 one', { timeout: 240_000 }, async () => {
  const v4 = [SEED_V4, ...TRAP_V4.filter((a) => !a.startsWith('127.') && a !== '0.0.0.0')];
  const v6 = [...TRAP_V6.filter((a) => a !== '::1'), ...TRAP_V4.filter((a) => a !== '0.0.0.0').flatMap((a) => carriers(a).slice(1))];
  const script = [
    'set -e',
    'ip link set lo up',
    ...v4.map((a) => `ip addr add ${a}/32 dev lo`),
    ...v6.map((a) => `ip -6 addr add ${a}/128 dev lo nodad`),
    `exec ${shq(process.execPath)} --import ${shq(TSX)} ${shq(CHILD)}`,
  ].join('\n');
  const argv = ['unshare', ...(process.getuid?.() === 0 ? ['-n'] : ['-r', '-n']), 'sh', '-c', script];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => { stdout += b.toString(); });
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  const code = await new Promise<number | null>((r) => child.on('close', r));
  assert.equal(code, 0, `the namespace child failed (needs unshare and ip from iproute2): ${stderr.slice(-2000)}`);
  const out = JSON.parse(stdout.trim().split('\n').pop()!) as { v6Allow: Run; v4Allow: Run };

  const r1 = out.v6Allow;
  assert.equal(r1.exit, 0, r1.stderr);
  const locals1 = new Set(r1.hits.map((h) => plain(h.local)));
  assert.ok(locals1.has(SEED_V4), 'the allowed IPv4 /32 was crawled');
  assert.ok(locals1.has('::1'), 'the IPv6 allowance ::/0 is in force (::1 was crawled)');
  const leaked1 = r1.hits.filter((h) => plain(h.local) !== SEED_V4 && plain(h.local) !== '::1');
  assert.deepEqual(leaked1, [], 'no request reached an IPv4 special-purpose address under --allow-network ::/0');
  const blocked1 = r1.crawlLog.split('\n').filter((l) => l.includes('CRAWL_FETCH_BLOCKED_ADDRESS'));
  for (const a of [...TRAP_V4, ...UNREACHABLE_V4]) {
    assert.ok(blocked1.some((l) => l.includes(`//${a}:`)), `crawl.log records ${a} as refused`);
    assert.ok(blocked1.some((l) => l.includes(`//[::ffff:`) && l.includes('/carrier')), 'mapped spellings recorded as refused');
  }
  assert.ok(blocked1.some((l) => /\/\/a\d+\.test:/.test(l)), 'a name whose A record is special is refused');
  assert.ok(blocked1.some((l) => /\/\/m\d+\.test:/.test(l)), 'a name whose AAAA record is IPv4-mapped special is refused');

  const r2 = out.v4Allow;
  assert.equal(r2.exit, 0, r2.stderr);
  const locals2 = new Set(r2.hits.map((h) => plain(h.local)));
  assert.ok(locals2.has(SEED_V4), 'the seed was crawled under 0.0.0.0/0');
  const leaked2 = r2.hits.filter((h) => plain(h.local).includes(':'));
  assert.deepEqual(leaked2, [], 'no request reached an IPv6 special-purpose address under --allow-network 0.0.0.0/0');
  const blocked2 = r2.crawlLog.split('\n').filter((l) => l.includes('CRAWL_FETCH_BLOCKED_ADDRESS'));
  for (const a of TRAP_V6) assert.ok(blocked2.some((l) => l.includes(`//[${a}]:`)), `crawl.log records [${a}] as refused`);
});
