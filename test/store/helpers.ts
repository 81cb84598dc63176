/** Read a WARC file back with the npm `warcio` package and recompute every digest. */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { WARCParser } from 'warcio';
import { base32Encode } from '../../src/util/digest.js';
import { decompressWarcZst } from '../../src/store/zstd-dict.js';

export interface ReadRecord {
  type: string;
  offset: number;
  length: number;
  headers: Map<string, string>;
  block: Uint8Array;
  payload: Uint8Array | null; // after the HTTP head, for application/http records
}

export function sha1(...b: Uint8Array[]): string {
  const h = createHash('sha1');
  for (const x of b) h.update(x);
  return 'sha1:' + base32Encode(h.digest());
}

/** All records via warcio (zstd files are decompressed first, with their dictionary frame's dictionary: warcio has no zstd support). */
export async function readWarc(file: string): Promise<ReadRecord[]> {
  let data: Uint8Array = readFileSync(file);
  if (file.endsWith('.zst')) data = decompressWarcZst(data);
  const parser = new WARCParser((async function* () { yield data; })(), { parseHttp: false });
  const out: ReadRecord[] = [];
  for await (const rec of parser) {
    const block = new Uint8Array(await rec.readFully(false)); // a copy: plain Uint8Array, not a Buffer view
    const headers = new Map<string, string>();
    for (const [k, v] of rec.warcHeaders.headers as Map<string, string>) headers.set(k.toLowerCase(), v);
    let payload: Uint8Array | null = null;
    if ((headers.get('content-type') ?? '').startsWith('application/http')) {
      const i = Buffer.from(block).indexOf('\r\n\r\n');
      payload = i < 0 ? null : block.subarray(i + 4);
    }
    out.push({ type: rec.warcType ?? '', offset: parser.offset, length: parser.recordLength, headers, block, payload });
  }
  return out;
}
