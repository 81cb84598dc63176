/**
 * src/simweb/model — the synthetic web as pure functions of (seed, params): the graph (graph.ts)
 * over the host model (host-model.ts, host-info.ts), link plans (link-plan.ts), page rendering
 * (render.ts), robots.txt files (robots-file.ts, robots-model.ts), sitemaps, and the parameters
 * with their presets (web-params.ts, params.ts, adversary-presets.ts). docs/simweb.md, "The model".
 */
export { ADVERSARY_PRESET_NAMES, type AdversaryPreset } from './adversary-presets.js';
export { WebGraph, ipString, parseUint, type HostInfo, type RenderedBody } from './graph.js';
export { mulberry32 } from './hash.js';
export { DEFAULT_PARAMS, PRESETS, resolveParams, type SimwebPreset, type WebParams } from './params.js';
export { hasSitemaps, hiddenLastmod } from './sitemaps.js';
