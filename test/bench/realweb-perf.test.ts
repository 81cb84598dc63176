/**
 * bench:realweb --perf (bench/realweb/perf.ts): a `perf report` symbol's kind of work.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kindOf } from '../../bench/realweb/perf.js';

test('perf symbols by kind: V8\'s optimizing compiler, its GC, the kernel, the rest', () => {
  assert.equal(kindOf('[.] v8::internal::compiler::GraphReducer::ReduceTop'), 'compiler');
  assert.equal(kindOf('[.] v8::internal::compiler::LinearScanAllocator::AllocateRegisters'), 'compiler');
  assert.equal(kindOf('[.] v8::internal::ConcurrentMarkingVisitor::ShouldVisit'), 'gc');
  assert.equal(kindOf('[.] v8::internal::MarkingVisitorBase<v8::internal::ConcurrentMarkingVisitor, v8::internal::ConcurrentMarkingState>::VisitEmbeddedPointer'), 'gc');
  assert.equal(kindOf('[.] v8::internal::Scavenger::ScavengePage'), 'gc');
  assert.equal(kindOf('[k] pvm_irq_enable'), 'kernel');
  assert.equal(kindOf('[.] Builtins_LoadIC'), 'other');
  assert.equal(kindOf('[.] inflate_fast'), 'other');
  assert.equal(kindOf('[.] v8::internal::Utf8DecoderBase<v8::internal::Utf8Decoder>::Decode<unsigned short>'), 'other');
});
