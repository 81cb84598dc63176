/**
 * What a crawl archived, read back from its WARC files and CDXJ indexes (for the real-web tests'
 * replay checks): per target URI, the captures (response or revisit records) with the HTTP status,
 * media type and — for responses — the payload decoded as a browser would read it (transfer and
 * content encodings undone, by the npm `warcio` reader); and the URLs the CDXJ lines index.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { WARCParser } from 'warcio';

export interface Capture {
  type: 'response' | 'revisit';
  status: number | null;
  mime: string;
  /** decoded payload (responses only) */
  body: Uint8Array | null;
  refersTo: string | null;
}

export async function readArchive(dir: string): Promise<Map<string, Capture[]>> {
  const out = new Map<string, Capture[]>();
  for (const f of readdirSync(dir).filter((x) => /\.warc(\.gz)?$/.test(x)).sort()) {
    const data = readFileSync(path.join(dir, f));
    const parser = new WARCParser((async function* () { yield data; })(), { parseHttp: true });
    for await (const rec of parser) {
      const type = rec.warcType;
      const uri: string = rec.warcTargetURI ?? '';
      if ((type !== 'response' && type !== 'revisit') || !/^https?:/.test(uri)) {
        await rec.readFully(false);
        continue;
      }
      const http = rec.httpHeaders;
      const status = http?.statusCode !== undefined ? Number(http.statusCode) : null;
      const mime = (http?.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const body = type === 'response' ? new Uint8Array(await rec.readFully(true)) : (await rec.readFully(false), null);
      const c: Capture = { type, status, mime, body, refersTo: rec.warcHeaders.headers.get('WARC-Refers-To-Target-URI') ?? null };
      let l = out.get(uri);
      if (l === undefined) out.set(uri, (l = []));
      l.push(c);
    }
  }
  return out;
}

/** The URLs the CDXJ indexes of `dir` hold (the `url` field of every line). */
export function cdxjUrls(dir: string): Set<string> {
  const out = new Set<string>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cdxj'))) {
    for (const line of readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const j = line.indexOf('{');
      if (j < 0) continue;
      out.add((JSON.parse(line.slice(j)) as { url: string }).url);
    }
  }
  return out;
}
