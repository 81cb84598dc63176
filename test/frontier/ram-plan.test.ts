/**
 * The RAM plan (src/budget/ram-budget.ts) against the budget it divides: from the smallest --ram the
 * process is held under (RSS_HELD_FROM_MIB) up, the process's fixed part plus every share the plan
 * hands out plus the main thread's heap limit beyond its shares fits in --ram, whatever the cores;
 * the parse pool never holds more workers than its share gives 64 MiB each; a cluster partition's
 * share is divided whole (its node holds the fixed part once).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FIXED_BYTES, PENDING_PAGE_BYTES, PENDING_PAGES_FLOOR, ramPlan, shareableRam } from '../../src/budget/ram-budget.js';
import { bodyBudgetBytes } from '../../src/budget/body-budget.js';
import { mainHeapFlags } from '../../src/budget/heap-budget.js';
import { RSS_HELD_FROM_MIB } from '../../src/config/config.js';

const MiB = 1024 * 1024;

/**
 * Every byte the plan hands out, on the main heap and off it. Of the pending pages, those above
 * the floor: the floor's (fetchConcurrency × 64 at the default concurrency) are among what the
 * fetch concurrency bounds, in the main heap's room beyond its shares.
 */
function shares(ram: number, workers: number): { offHeap: number; mainHeap: number } {
  const p = ramPlan(ram, workers);
  return {
    offHeap: p.urlSeenBytes + p.contentSeenBytes + p.starBytes + p.robotsCacheBytes + p.robotsRequestedBytes
      + p.parseWorkers * p.parseWorkerHeapMb * MiB + p.contentBatchBytes + (p.pendingPages - PENDING_PAGES_FLOOR) * PENDING_PAGE_BYTES + bodyBudgetBytes({ ramBytes: ram, maxBodyBytes: 8 * MiB }).capacity,
    mainHeap: p.frontierUrlBytes + p.hostTableBytes,
  };
}

test('ram plan: fixed part + off-heap shares + the main heap limit fit in --ram', () => {
  fc.assert(fc.property(fc.integer({ min: RSS_HELD_FROM_MIB, max: 64 * 1024 }), fc.integer({ min: 1, max: 256 }), (mib, workers) => {
    const ram = mib * MiB;
    const { offHeap, mainHeap } = shares(ram, workers);
    const h = mainHeapFlags(ram);
    const mainLimit = (h.oldSpaceMb + 3 * h.semiSpaceMb) * MiB;
    // The main heap's limit holds its shares with room left for what the fetch concurrency bounds
    // (pages in flight, result chunks, refill batches), not the crawl.
    assert.ok(mainLimit - mainHeap >= 64 * MiB, `main heap ${mainLimit / MiB} MiB for ${mainHeap / MiB} MiB of shares at ${mib} MiB`);
    assert.ok(FIXED_BYTES + offHeap + mainLimit <= ram, `${mib} MiB, ${workers} workers: ${(FIXED_BYTES + offHeap + mainLimit) / MiB} MiB planned`);
  }), { numRuns: 500 });
});

test('ram plan: parse workers are as many as the cores asked for, at most (U/4 − bodies) / 64 MiB, at least one', () => {
  fc.assert(fc.property(fc.integer({ min: 256, max: 64 * 1024 }), fc.integer({ min: 1, max: 256 }), (mib, workers) => {
    const p = ramPlan(mib * MiB, workers);
    const fit = Math.floor((Math.floor(shareableRam(mib * MiB) / 4) - p.bodyBytes) / (64 * MiB));
    assert.equal(p.parseWorkers, Math.max(1, Math.min(workers, fit)));
    assert.ok(p.parseWorkerHeapMb >= 64);
  }));
  assert.equal(ramPlan(512 * MiB, 2).parseWorkers, 1);
  assert.equal(ramPlan(1024 * MiB, 2).parseWorkers, 2);
  assert.equal(ramPlan(1024 * MiB, 16).parseWorkers, 2);
  assert.equal(ramPlan(4096 * MiB, 16).parseWorkers, 11);
});

test('ram plan: a cluster partition divides its share whole', () => {
  const share = 300 * MiB;
  assert.equal(ramPlan(share, 1, null, false).urlSeenBytes, Math.floor(share / 8));
  assert.equal(ramPlan(share, 1, null, true).urlSeenBytes, Math.floor(shareableRam(share) / 8));
  assert.equal(shareableRam(512 * MiB), 512 * MiB - FIXED_BYTES);
  assert.equal(shareableRam(256 * MiB), 128 * MiB);
});
