/**
 * Interim `100 Continue` responses that undici would refuse.
 *
 * RFC 9110 §15.2: a client must be able to parse one or more 1xx responses received before the
 * final response, even if it did not expect one; §15.2.1 names `100 Continue` among them. undici
 * (7.x, HTTP/1.1) passes other 1xx heads to the handler (the fetcher keeps only the final head) but
 * destroys the socket on a 100 it did not ask for (`Expect: 100-continue`), which would turn a good
 * response into CRAWL_FETCH_RESET. The connector below wraps each socket: after every request
 * write, it reads the status line of each response head as it arrives and, for `100`, changes the
 * status code's last digit to `102` (an interim code undici passes on like 103) — three bytes in
 * place; everything else, the final response included, goes to undici untouched. The head is never
 * stored (the next head replaces it in the fetcher), so the WARC record is not affected.
 *
 * It works at the socket's `read()`, which undici's HTTP/1.1 parser pulls from (one response per
 * request: the fetcher never pipelines), with a constant-size state per socket and no copy.
 */
import type { Socket } from 'node:net';
import { createRequire } from 'node:module';
import type { buildConnector as undiciConnector } from 'undici';

// from its own file, not from undici's index (fetcher.ts says why)
const buildConnector = createRequire(import.meta.url)('undici/lib/core/connect.js') as typeof undiciConnector;

const HTTP_1 = Buffer.from('HTTP/1.');

/** Wrap `socket` so that interim `100` heads reach undici as `102`. */
export function passInterim100(socket: Socket): void {
  // 0: between responses (nothing to look at) · 1: in a status line (pos = bytes matched) ·
  // 2: in the rest of a 1xx head (crlf = progress through CR LF CR LF; another head follows)
  let phase = 0;
  let pos = 0;
  let is100 = false;
  let crlf = 0;
  const scan = (b: Buffer): void => {
    for (let i = 0; i < b.length && phase !== 0; i++) {
      const c = b[i]!;
      if (phase === 1) {
        if (pos < 7) { if (c !== HTTP_1[pos]) { phase = 0; break; } }
        else if (pos === 7) { if (c < 0x30 || c > 0x39) { phase = 0; break; } }
        else if (pos === 8) { if (c !== 0x20) { phase = 0; break; } }
        else if (pos === 9) { if (c !== 0x31) { phase = 0; break; } } // not 1xx: the final response
        else if (pos === 10) is100 = c === 0x30;
        else {
          if (is100 && c === 0x30) b[i] = 0x32;
          phase = 2;
          crlf = 0;
        }
        pos++;
      } else if (c === 0x0d) crlf = crlf === 2 ? 3 : 1;
      else if (c === 0x0a) {
        crlf = crlf === 1 ? 2 : crlf === 3 ? 4 : 0;
        if (crlf === 4) { phase = 1; pos = 0; }
      } else crlf = 0;
    }
  };
  const write = socket.write;
  socket.write = function (this: Socket, ...args: unknown[]): boolean {
    // A request goes out: the next bytes read start its response.
    phase = 1;
    pos = 0;
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as Socket['write'];
  const read = socket.read;
  socket.read = function (this: Socket, size?: number): unknown {
    const chunk = read.call(this, size) as unknown;
    if (phase !== 0 && Buffer.isBuffer(chunk)) scan(chunk);
    return chunk;
  } as Socket['read'];
}

/** undici's own connector (TCP/TLS, connect timeout) with passInterim100 on every socket. */
export function interimConnector(opts: undiciConnector.BuildOptions): undiciConnector.connector {
  const base = buildConnector(opts);
  return (options, callback) => base(options, (err, socket) => {
    if (err === null && socket !== null) passInterim100(socket as Socket);
    if (err !== null) callback(err, null);
    else callback(null, socket!);
  });
}
