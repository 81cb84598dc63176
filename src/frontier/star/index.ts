/**
 * src/frontier/star — STAR (thesis VI.2): each pay-level domain's budget B = F(d) of pages per pass
 * from its in-degree d in the PLD graph, counted over distinct PLD→PLD edges (edge-key.ts) and by
 * default only from trusted PLDs (pending-votes.ts); the PLD table in memory or in a DRUM
 * (star-drum.ts); the budget functions and the delays they scale (budget.ts).
 */
export {
  type BudgetFunction,
  type BudgetContext,
  type BudgetPreset,
  type DelayOptions,
  crawlBudget,
  flatBudget,
  proportionalBudget,
  popularOnlyBudget,
  budgetPreset,
  hostDelayFor,
  ipDelayFor,
  IndegreeHistogram,
} from './budget.js';
export { pathSlot } from './edge-key.js';
export { Star, MemoryPldStore, edgeKey, TRUST_THRESHOLD, type PldStore, type DegreeListener, type TrustOptions } from './star.js';
export { DrumPldStore, type DrumPldStoreOptions } from './star-drum.js';
