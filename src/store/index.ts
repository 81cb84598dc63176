/**
 * src/store — WARC/1.1 output and the crawl log.
 *
 * Data flow: a fetch result → encodeExchangeRecords / encodeRevisitRecords (pure: digests, one
 * compressed unit per record; may run in a parse worker) → WarcWriter.appendEncoded (buffered
 * append, size rotation, each file starting with warcinfo) — or WarcWriter.writeExchange /
 * writeRevisit, which do both in the caller's thread. On resume, truncateTornWarc cuts a file
 * back to the checkpointed offset (or to its last complete record). CrawlLog writes one TSV line
 * per fetch. Each WARC file has a CDXJ index beside it (cdxj.ts, cdxj-writer.ts; made to match
 * the file after a crash by cdxj-recover.ts); DNS answers are `dns:` records (dns-record.ts).
 * Formats: docs/output-format.md.
 *
 * API notes: WriteResult also carries
 * payloadDigest; WarcWriterOptions adds gzipLevel, zstdLevel, bufferBytes, now; the writer exposes
 * appendEncoded(group) + encodeOptions for worker-side encoding; scanWarc for readers/tests.
 */
export { WarcWriter, type WarcWriterOptions, type WriteResult } from './warc-writer.js';
export {
  encodeExchangeRecords, encodeExchangeRecordsView, encodeRevisitRecords, warcinfoRecord, buildRecord, compressRecord, newRecordId, warcDate,
  sha1Digest, neutralizeTransferEncoding, fileExtension, REVISIT_PROFILE, SOFTWARE,
  type EncodedGroup, type ExchangeInput, type RevisitInput, type EncodeOptions, type WarcCompression, type TruncatedReason,
} from './warc-record.js';
export { surtKey, cdxTimestamp, cdxjLine, cdxjLineFor, httpHeadInfo, type CdxEntry, type CdxSource } from './cdxj/cdxj.js';
export { CdxjSidecar, cdxjPathFor, cdxjOpenPathFor, sortLinesFile, readCdxj, parseCdxjLine } from './cdxj/cdxj-writer.js';
export { recoverCdxj, repairOpenCdxj, finishCdxj, removeCdxj, indexWarcRecords, cdxSourceOf } from './cdxj-recover.js';
export { encodeDnsRecord, dnsBlock, dnsRecordLine, type DnsAnswerInput } from './dns-record.js';
export { scanWarc, truncateTornWarc, readWarcDictionary, type ScanResult, type ScannedRecord, type WarcFormat } from './warc-scan.js';
export {
  buildDictionary, dictionaryFrame, dictionaryFromUserData, dictionaryId, decompressWarcZst, newDictSlot, publishDictionary, slotDictionary,
  zstdFrameHeader, DICT_FRAME_MAGIC, DICT_MAGIC, MAX_DICT_BYTES,
} from './zstd-dict.js';
export { trainDictionary, trainContent, type TrainOptions } from './zstd-train.js';
export { CrawlLog, formatCrawlLogLine, parseCrawlLogLine, mediaType, CRAWL_LOG_COLUMNS, type CrawlLogEntry, type CrawlLogFormat } from './crawl-log.js';
export { formatHeritrixLine, parseHeritrixLine, heritrixStatus, heritrixMime, HERITRIX_STATUS, type HeritrixLine } from './crawl-log-heritrix.js';
