/**
 * src/html — outlink extraction, charset detection, content digests.
 *
 * Data flow (parse worker): response bytes → decodeHtml (BOM > header > <meta> prescan > utf-8) →
 * extractLinks (fast scanner; follows svg, select and framesets itself and defers to the parse5
 * reference only for math, template and the rare tree-construction cases listed in links.ts, within
 * the bounds of fallback-limit.ts: beyond them CRAWL_PARSE_LIMIT) →
 * caller resolves values against baseHref/page URL and canonicalizes (src/url). payloadDigest
 * gives the WARC-Payload-Digest used for exact-duplicate detection.
 */
export type { ExtractedLink, ExtractResult, ExtractOptions } from './types.js';
export { extractLinks, fastExtractStats } from './links.js';
export { extractLinksReference } from './links-reference.js';
export { FALLBACK_MAX_CHARS, FALLBACK_MAX_DEPTH, nestingEstimate } from './fallback-limit.js';
export { parseMetaRefresh, srcsetUrls } from './collect.js';
export { cssUrls, decodeCss } from './css.js';
export { decodeHtml, prescanCharset, sniffBom } from './charset.js';
export { payloadDigest, sha1Base32, base32Encode } from '../util/digest.js';
