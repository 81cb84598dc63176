/**
 * src/budget — where each RAM bound of a crawl comes from (--ram bounds the whole process): the
 * plan that splits --ram among the frontier, the DRUMs and the robots stage (ram-budget.ts), the
 * budget of response bodies in flight (body-budget.ts) and the V8 heaps of the main thread and the
 * workers (heap-budget.ts).
 */
export { MAX_DECODED_BYTES, budgetStatus, newBodyBudget, parseCopyBytes, type BodyBudget } from './body-budget.js';
export { heapWarning, mainHeapFlags, releaseWorkerHeapFlags, startWithInitialOldSpace } from './heap-budget.js';
export { ramPlan } from './ram-budget.js';
