/** Read WARC files back with the npm `warcio` package; recompute block and payload digests. */
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { WARCParser } from 'warcio';
import { base32Encode } from '../../src/util/digest.js';
import { decompressWarcZst } from '../../src/store/zstd-dict.js';

export interface WarcRec {
  file: string;
  type: string;
  uri: string | undefined;
  headers: Map<string, string>;
  /** null when the record has no WARC-Block-Digest */
  blockDigestOk: boolean | null;
  /** response records: null when there is no WARC-Payload-Digest */
  payloadDigestOk: boolean | null;
  /** response records: bytes of the HTTP payload (the block after the response head) */
  payloadBytes: number | null;
  /** response records: the HTTP head's Content-Length, when it has one */
  httpContentLength: number | null;
}

function sha1(b: Uint8Array): string {
  return 'sha1:' + base32Encode(createHash('sha1').update(b).digest());
}

export async function readWarcDir(dir: string, only?: (file: string) => boolean): Promise<WarcRec[]> {
  const out: WarcRec[] = [];
  for (const f of readdirSync(dir).filter((x) => /\.warc(\.gz|\.zst)?$/.test(x) && (only?.(x) ?? true)).sort()) {
    let data: Uint8Array = readFileSync(path.join(dir, f));
    if (f.endsWith('.zst')) data = decompressWarcZst(data);
    const parser = new WARCParser((async function* () { yield data; })(), { parseHttp: false });
    for await (const rec of parser) {
      const block = new Uint8Array(await rec.readFully(false));
      const headers = new Map<string, string>();
      for (const [k, v] of rec.warcHeaders.headers as Map<string, string>) headers.set(k.toLowerCase(), v);
      const bd = headers.get('warc-block-digest');
      const pd = headers.get('warc-payload-digest');
      let payloadDigestOk: boolean | null = null;
      let payloadBytes: number | null = null;
      let httpContentLength: number | null = null;
      if (rec.warcType === 'response' && !(headers.get('content-type') ?? '').startsWith('application/http')) {
        // not HTTP (a dns: record, text/dns): the payload is the whole block
        payloadDigestOk = pd === undefined ? null : sha1(block) === pd;
        payloadBytes = block.byteLength;
      } else if (rec.warcType === 'response') {
        const i = Buffer.from(block).indexOf('\r\n\r\n');
        payloadDigestOk = pd === undefined ? null : i >= 0 && sha1(block.subarray(i + 4)) === pd;
        if (i >= 0) {
          payloadBytes = block.byteLength - (i + 4);
          const cl = /^content-length:[ \t]*(\d+)[ \t]*$/im.exec(Buffer.from(block.subarray(0, i)).toString('latin1'));
          if (cl !== null) httpContentLength = Number(cl[1]);
        }
      }
      out.push({
        file: f, type: rec.warcType ?? '', uri: headers.get('warc-target-uri'), headers,
        blockDigestOk: bd === undefined ? null : sha1(block) === bd, payloadDigestOk, payloadBytes, httpContentLength,
      });
    }
  }
  return out;
}

/**
 * What every WARC record of the crawler must satisfy, as a list of failures: a block digest that
 * recomputes (every record), a payload digest that recomputes (responses), and a response payload
 * that is the whole body the server announced — or a WARC-Truncated header saying why not.
 */
export function warcProblems(recs: readonly WarcRec[]): string[] {
  const bad: string[] = [];
  for (const x of recs) {
    const id = `${x.file}: ${x.type} ${x.uri ?? ''}`;
    if (x.blockDigestOk !== true) bad.push(`${id}: block digest ${x.blockDigestOk === null ? 'missing' : 'wrong'}`);
    if (x.type !== 'response') continue;
    if (x.payloadDigestOk !== true) bad.push(`${id}: payload digest ${x.payloadDigestOk === null ? 'missing' : 'wrong'}`);
    if (x.httpContentLength !== null && x.payloadBytes !== x.httpContentLength && !x.headers.has('warc-truncated')) {
      bad.push(`${id}: ${x.payloadBytes} payload bytes of Content-Length ${x.httpContentLength}, no WARC-Truncated`);
    }
  }
  return bad;
}
