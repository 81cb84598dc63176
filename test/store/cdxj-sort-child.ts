/**
 * Child of cdxj.test.ts's bounded-heap test: sorts argv[2] into argv[3] with sortLinesFile's
 * defaults, in a process started with a small --max-old-space-size, and prints the peak of its
 * V8 heap (used bytes, sampled after each of the sort's reads).
 */
import v8 from 'node:v8';
import { sortLinesFile } from '../../src/store/cdxj/cdxj-writer.js';

let peak = 0;
const timer = setInterval(() => {
  peak = Math.max(peak, v8.getHeapStatistics().used_heap_size);
}, 5);
await sortLinesFile(process.argv[2]!, process.argv[3]!);
clearInterval(timer);
process.stdout.write(JSON.stringify({ peakUsedMiB: peak / 2 ** 20 }) + '\n');
