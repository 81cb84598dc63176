/**
 * IPv4 network membership by arithmetic (src/fetch/limits.ts ipv4Number / ipv4Net, used by the
 * network guard on every fetch) decides exactly as node's BlockList: for random addresses — many
 * at the edges of the networks — and random CIDR lists (IPv4, IPv6, IPv4-mapped IPv6), the allow
 * predicate and the special-range refusal agree with BlockLists built from the same CIDRs, one per
 * family (each family is judged by its own rules only: a BlockList holding both would match an
 * IPv4 address against `::/0` and an IPv4-mapped address against an IPv4 rule).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import fc from 'fast-check';
import { ipv4Number, networkPredicate } from '../../src/fetch/limits.js';
import { specialAddress, SPECIAL_IPV4 } from '../../src/fetch/address-guard.js';

const quad = (n: number): string => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** An IPv4 CIDR and its first address as a number. */
const v4Cidr = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([n, bits]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { cidr: `${quad((n & mask) >>> 0)}/${bits}`, first: (n & mask) >>> 0, size: 2 ** (32 - bits) };
});
const v6Cidr = fc.constantFrom('::1/128', 'fd00::/8', '::ffff:10.0.0.0/104', '::ffff:0:0/96', '2001:db8::/32', '::/0', '::/1');

function reference(cidrs: readonly string[]): (ip: string, type: 'ipv4' | 'ipv6') => boolean {
  const bl = { ipv4: new BlockList(), ipv6: new BlockList() };
  for (const c of cidrs) {
    const [a, bits] = c.split('/');
    const type = a!.includes(':') ? 'ipv6' : 'ipv4';
    bl[type].addSubnet(a!, Number(bits), type);
  }
  return (ip, type) => bl[type].check(ip, type);
}

test('ipv4Number reads a dotted quad as an unsigned 32-bit number', () => {
  assert.equal(ipv4Number('0.0.0.0'), 0);
  assert.equal(ipv4Number('127.0.0.1'), 0x7f000001);
  assert.equal(ipv4Number('255.255.255.255'), 0xffffffff);
  assert.equal(ipv4Number('10.200.3.45'), (10 * 2 ** 24) + (200 << 16) + (3 << 8) + 45);
});

test('property: the allow predicate decides IPv4 addresses as a BlockList of the same CIDRs', () => {
  const arb = fc.tuple(fc.array(v4Cidr, { minLength: 0, maxLength: 6 }), fc.array(v6Cidr, { maxLength: 2 })).chain(([v4, v6]) => {
    // addresses at and just outside each network's edges, and anywhere
    const edges = v4.flatMap((c) => [c.first, c.first - 1, c.first + c.size - 1, c.first + c.size]).filter((n) => n >= 0 && n <= 0xffffffff);
    const addr = edges.length > 0 ? fc.oneof(fc.constantFrom(...edges), fc.integer({ min: 0, max: 0xffffffff })) : fc.integer({ min: 0, max: 0xffffffff });
    return fc.tuple(fc.constant([...v4.map((c) => c.cidr), ...v6]), fc.array(addr, { minLength: 1, maxLength: 8 }));
  });
  fc.assert(fc.property(arb, ([cidrs, addrs]) => {
    const pred = networkPredicate(cidrs);
    const ref = reference(cidrs);
    for (const n of addrs) {
      const ip = quad(n);
      if (pred(ip) !== ref(ip, 'ipv4')) return false;
      if (pred(`::ffff:${ip}`) !== ref(`::ffff:${ip}`, 'ipv6')) return false;
    }
    return true;
  }), { seed: Number(process.env.FC_SEED ?? 0x1b4), numRuns: 3000 });
});

test('property: an IPv4 address is a special-purpose one exactly when a BlockList of SPECIAL_IPV4 holds it', () => {
  const ref = SPECIAL_IPV4.map(([cidr]) => reference([cidr]));
  const edges = SPECIAL_IPV4.flatMap(([cidr]) => {
    const [a, bits] = cidr.split('/');
    const first = ipv4Number(a!);
    const size = 2 ** (32 - Number(bits));
    return [first, first - 1, first + size - 1, first + size];
  }).filter((n) => n >= 0 && n <= 0xffffffff);
  const addr = fc.oneof(fc.constantFrom(...edges), fc.integer({ min: 0, max: 0xffffffff }));
  fc.assert(fc.property(addr, (n) => {
    const ip = quad(n);
    const i = ref.findIndex((check) => check(ip, 'ipv4'));
    const why = specialAddress(ip);
    return i < 0 ? why === null : why === `${SPECIAL_IPV4[i]![1]} ${SPECIAL_IPV4[i]![0]}`;
  }), { seed: Number(process.env.FC_SEED ?? 0x1b5), numRuns: 5000 });
});
