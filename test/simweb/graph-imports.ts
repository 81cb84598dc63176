export { WebGraph, resolveParams, ADVERSITY_COUNT } from '../../src/simweb/index.js';
import { isCrawlError } from '../../src/errors.js';
export const isCrawlErrorCode = (e: unknown, code: string): boolean => isCrawlError(e, code);
