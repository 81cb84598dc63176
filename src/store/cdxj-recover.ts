/**
 * The CDXJ index of a WARC file after a crash, and the index of records read back from a WARC file.
 *
 * After a resume's recovery has cut a WARC file back to its valid length (src/state/recovery.ts),
 * its index must list exactly the indexable records of what is left (cdxj.ts says which). What a
 * crash can leave:
 * - `<name>.cdxj` alone: the file was finished (rotated or closed), so it was complete and synced
 *   before its index was sorted; the index is kept when every line lies inside the file, and
 *   rebuilt otherwise.
 * - `<name>.cdxj.open`: the file was being written. Its lines are in write order, i.e. in offset
 *   order, and up to the last sync they are durable; after that they may be missing, torn, or
 *   name records the WARC never got. The longest prefix of well-formed lines with increasing
 *   offsets whose records end inside the file is kept; the records after the last kept one are
 *   read from the WARC (scanWarc from that record's end, a record boundary) and indexed here. Only
 *   the bytes after the last durable line are read: about what the WARC recovery reads itself.
 * - neither (a crash between creating a WARC file and its `.open` file): indexed from the start.
 * That repair is done in place in the `.open` file (repairOpenCdxj: a resume waits for it); the
 * lines are then sorted into `<name>.cdxj` (write to a temporary file, fsync, rename) and the
 * `.open` file removed (finishCdxj: a resumed crawl does it while it crawls, src/crawl/checkpoint-stage.ts),
 * so a crash before that leaves the `.open` file for the next attempt.
 */
import { open, rename, rm, stat, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Decompressor } from 'zstd-napi';
import { readWarcDictionary, scanWarc } from './warc-scan.js';
import { cdxjLineFor, type CdxSource } from './cdxj/cdxj.js';
import { cdxjOpenPathFor, cdxjPathFor, parseCdxjLine, sortLinesFile } from './cdxj/cdxj-writer.js';

/** CRLF CRLF after each record's block (uncompressed files). */
const PLAIN_TRAILER = 4;

async function exists(f: string): Promise<boolean> {
  try {
    await stat(f);
    return true;
  } catch {
    return false;
  }
}

async function readLinesOf(f: string): Promise<string[]> {
  try {
    return (await readFile(f, 'utf8')).split('\n');
  } catch {
    return [];
  }
}

/** The decimal string value of `"<key>":"…"` searched from the line's end, or null. */
function tailField(l: string, key: string): number | null {
  const at = l.lastIndexOf(`"${key}":"`);
  if (at < 0) return null;
  const from = at + key.length + 4;
  const to = l.indexOf('"', from);
  if (to <= from || to - from > 15) return null;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = l.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return null;
    v = v * 10 + c;
  }
  return v;
}

/**
 * Offset and length of a line, or null when the line is torn or not a CDXJ line. The writer's own
 * lines (cdxj.ts: length, offset and filename are the JSON's last fields, and a string value
 * cannot hold an unescaped quote) are read by their last `"length":"` and `"offset":"` without a
 * JSON parse — a resume reads every line of the open index, ~10^5 for a GiB of WARC; a line that
 * does not end in a closed JSON object, or lacks the fields, is parsed whole.
 */
function span(l: string): { offset: number; end: number } | null {
  if (l.endsWith('"}')) {
    const offset = tailField(l, 'offset');
    const length = tailField(l, 'length');
    if (offset !== null && length !== null && length > 0 && l.indexOf(' {') > 0) return { offset, end: offset + length };
  }
  try {
    const j = parseCdxjLine(l).json;
    const offset = Number(j.offset);
    const length = Number(j.length);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length <= 0) return null;
    return { offset, end: offset + length };
  } catch {
    return null;
  }
}

/**
 * Make `<warc>.cdxj` match the WARC file as it now is (see the top comment): repairOpenCdxj, then
 * finishCdxj. `validLength`: the file's length after recovery cut it. Returns how many lines were
 * kept and how many were read back from the WARC.
 */
export async function recoverCdxj(warcFile: string, validLength: number): Promise<{ kept: number; reindexed: number }> {
  const r = await repairOpenCdxj(warcFile, validLength);
  await finishCdxj(warcFile);
  return { kept: r.kept, reindexed: r.reindexed };
}

/**
 * The first half of recoverCdxj, all a resume waits for: `<warc>.cdxj.open` made to list exactly
 * the indexable records of the file as it now is, in place and still unsorted — the longest good
 * prefix of its lines kept (the file cut after it), the records after that read back from the WARC
 * and appended — so that its cost is the tail's, not the whole index's (a GiB WARC file's index is
 * ~64 MB: reading, sorting and writing it took 3–6 s of a resume at 10^6 hosts in bench:soak).
 * A file whose index is finished (`<warc>.cdxj`) and lies inside it: `open: false`, nothing to do;
 * one that does not, or that has no index at all, is indexed whole into a new `.open` file.
 */
export async function repairOpenCdxj(warcFile: string, validLength: number): Promise<{ kept: number; reindexed: number; open: boolean }> {
  const done = cdxjPathFor(warcFile);
  const openFile = cdxjOpenPathFor(warcFile);
  // an uncompressed record's line leaves out its CRLF CRLF trailer (cdxj.ts): the next record starts after it
  const trailer = /\.warc$/.test(warcFile) ? PLAIN_TRAILER : 0;
  if (await exists(openFile)) {
    let from = 0;
    let keptBytes = 0;
    let kept = 0;
    const buf = await readFile(openFile);
    // Whole lines only ('\n'-terminated): a torn last line is read back from the WARC instead.
    for (let at = 0; ;) {
      const nl = buf.indexOf(10, at);
      if (nl < 0) break;
      const l = buf.toString('latin1', at, nl);
      const s = l === '' ? null : span(l);
      if (s === null || s.offset < from || s.end + trailer > validLength) break;
      from = s.end + trailer;
      keptBytes = nl + 1;
      kept++;
      at = nl + 1;
    }
    const fresh = from < validLength ? await indexWarcRecords(warcFile, from, validLength) : [];
    const fh = await open(openFile, 'r+');
    try {
      await fh.truncate(keptBytes);
      if (fresh.length > 0) await fh.write(fresh.join('\n') + '\n', keptBytes, 'utf8');
    } finally {
      await fh.close();
    }
    return { kept, reindexed: fresh.length, open: true };
  }
  if (await exists(done)) {
    const lines = (await readLinesOf(done)).filter((l) => l !== '');
    if (lines.every((l) => { const s = span(l); return s !== null && s.end + trailer <= validLength; })) return { kept: lines.length, reindexed: 0, open: false };
  }
  const fresh = await indexWarcRecords(warcFile, 0, validLength);
  const tmp = openFile + '.tmp';
  await writeFile(tmp, fresh.length > 0 ? fresh.join('\n') + '\n' : '');
  await rename(tmp, openFile);
  await rm(done, { force: true });
  return { kept: 0, reindexed: fresh.length, open: true };
}

/**
 * The second half: the lines of `<warc>.cdxj.open` sorted into `<warc>.cdxj` (temporary file,
 * fsync, rename), then the `.open` file removed — a crash in between leaves the `.open` file, and
 * finishing it again gives the same index. Nothing to do when there is no `.open` file.
 */
export async function finishCdxj(warcFile: string): Promise<void> {
  const openFile = cdxjOpenPathFor(warcFile);
  if (!(await exists(openFile))) return;
  await sortLinesFile(openFile, cdxjPathFor(warcFile));
  await rm(openFile, { force: true });
}

/** Remove the index of a WARC file that recovery removed (an empty file left by a rotation). */
export async function removeCdxj(warcFile: string): Promise<void> {
  await rm(cdxjOpenPathFor(warcFile), { force: true });
  await rm(cdxjPathFor(warcFile), { force: true });
}

/**
 * CDXJ lines of the indexable records of `warcFile` that start in [from, to) (unsorted), read
 * back from the file: each record's compression unit is read and decompressed on its own (bounded
 * by the largest record), its WARC head and, for HTTP records, its HTTP head parsed.
 */
export async function indexWarcRecords(warcFile: string, from = 0, to = Infinity): Promise<string[]> {
  const scan = await scanWarc(warcFile, { fromOffset: from, collect: true });
  const name = path.basename(warcFile);
  const out: string[] = [];
  // zstd: each frame needs the file's dictionary, when it has one (warc-zstd)
  const zd = scan.format === 'zstd' ? new Decompressor() : null;
  const dict = zd !== null ? await readWarcDictionary(warcFile) : null;
  if (dict !== null) zd!.loadDictionary(dict);
  const fh = await open(warcFile, 'r');
  try {
    for (const r of scan.list ?? []) {
      if (r.offset >= to) break;
      if (r.type !== 'response' && r.type !== 'revisit' && r.type !== 'resource' && r.type !== 'metadata') continue;
      const raw = Buffer.alloc(r.length);
      await fh.read(raw, 0, r.length, r.offset);
      const rec = scan.format === 'gzip' ? gunzipSync(raw) : zd !== null ? Buffer.from(zd.decompress(raw)) : raw;
      const src = cdxSourceOf(rec);
      if (src !== null) out.push(cdxjLineFor(src, name, r.offset, scan.format === 'none' ? r.length - PLAIN_TRAILER : r.length));
    }
  } finally {
    await fh.close();
  }
  return out;
}

/** What a record's index line needs, from its bytes (WARC head + block); null: not indexed. */
export function cdxSourceOf(rec: Buffer): CdxSource | null {
  const headEnd = rec.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const fields = new Map<string, string>();
  for (const line of rec.subarray(0, headEnd).toString('utf8').split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) fields.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  const type = fields.get('warc-type');
  const url = fields.get('warc-target-uri');
  const date = fields.get('warc-date');
  const ct = fields.get('content-type') ?? '';
  if (url === undefined || date === undefined || Number.isNaN(Date.parse(date))) return null;
  if ((type === 'metadata' || type === 'resource') && ct.startsWith('application/warc-fields')) return null;
  const http = (type === 'response' || type === 'revisit') && ct.startsWith('application/http');
  let responseHead: Buffer | null = null;
  if (http) {
    const block = rec.subarray(headEnd + 4);
    const e = block.indexOf('\r\n\r\n');
    responseHead = e >= 0 ? block.subarray(0, e + 4) : block;
  } else if (type !== 'response' && type !== 'resource' && type !== 'metadata') {
    return null;
  }
  return {
    url,
    date: new Date(date),
    kind: type === 'revisit' ? 'revisit' : type === 'response' && http ? 'response' : 'other',
    responseHead,
    mime: http ? undefined : ct.split(';', 1)[0]!.trim(),
    payloadDigest: fields.get('warc-payload-digest'),
  };
}
