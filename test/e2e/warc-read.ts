/** Read WARC files back with the npm `warcio` package; recompute block and payload digests. */
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { WARCParser } from 'warcio';
import { decompress } from 'zstd-napi';
import { base32Encode } from '../../src/util/digest.js';

export interface WarcRec {
  file: string;
  type: string;
  uri: string | undefined;
  headers: Map<string, string>;
  blockDigestOk: boolean | null;
  payloadDigestOk: boolean | null;
  /** response records: bytes of the HTTP payload (the block after the response head) */
  payloadBytes: number | null;
}

function sha1(b: Uint8Array): string {
  return 'sha1:' + base32Encode(createHash('sha1').update(b).digest());
}

export async function readWarcDir(dir: string): Promise<WarcRec[]> {
  const out: WarcRec[] = [];
  for (const f of readdirSync(dir).filter((x) => /\.warc(\.gz|\.zst)?$/.test(x)).sort()) {
    let data: Uint8Array = readFileSync(path.join(dir, f));
    if (f.endsWith('.zst')) data = decompress(data);
    const parser = new WARCParser((async function* () { yield data; })(), { parseHttp: false });
    for await (const rec of parser) {
      const block = new Uint8Array(await rec.readFully(false));
      const headers = new Map<string, string>();
      for (const [k, v] of rec.warcHeaders.headers as Map<string, string>) headers.set(k.toLowerCase(), v);
      const bd = headers.get('warc-block-digest');
      let payloadDigestOk: boolean | null = null;
      let payloadBytes: number | null = null;
      if (rec.warcType === 'response') {
        const i = Buffer.from(block).indexOf('\r\n\r\n');
        payloadDigestOk = i >= 0 && sha1(block.subarray(i + 4)) === headers.get('warc-payload-digest');
        if (i >= 0) payloadBytes = block.byteLength - (i + 4);
      }
      out.push({
        file: f, type: rec.warcType ?? '', uri: headers.get('warc-target-uri'), headers,
        blockDigestOk: bd === undefined ? null : sha1(block) === bd, payloadDigestOk, payloadBytes,
      });
    }
  }
  return out;
}
