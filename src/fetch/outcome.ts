/**
 * What a finished exchange is: transport errors and status codes mapped to outcome codes
 * (docs/errors.md), and the response head rebuilt for the WARC record (see fetcher.ts on why it is
 * rebuilt and how).
 */
import type { FetchResult } from './result.js';
import { FETCH_OUTCOMES as O, type FetchOutcomeCode } from './error-policy.js';

/** Map a transport error to an outcome code. */
export function classifyFetchError(err: unknown): FetchOutcomeCode {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  switch (code) {
    case 'ECONNREFUSED': return O.CONNECT_REFUSED;
    case 'UND_ERR_CONNECT_TIMEOUT': case 'ETIMEDOUT': return O.CONNECT_TIMEOUT;
    case 'EHOSTUNREACH': case 'ENETUNREACH': case 'EADDRNOTAVAIL': case 'EHOSTDOWN': case 'ENETDOWN': return O.CONNECT;
    case 'UND_ERR_HEADERS_TIMEOUT': return O.HEADERS_TIMEOUT;
    case 'UND_ERR_BODY_TIMEOUT': return O.BODY_TIMEOUT;
    case 'ECONNRESET': case 'EPIPE': case 'ECONNABORTED': case 'UND_ERR_SOCKET': case 'UND_ERR_CLOSED': return O.RESET;
    case 'UND_ERR_HEADERS_OVERFLOW': return O.TOO_LARGE;
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH': case 'UND_ERR_INFO': case 'UND_ERR_NOT_SUPPORTED': return O.BAD_RESPONSE;
    case 'UND_ERR_ABORTED': case 'UND_ERR_DESTROYED': return O.ABORTED;
    case 'EPROTO': return O.TLS;
    default:
      if (code.startsWith('HPE_')) return O.BAD_RESPONSE;
      // Some undici errors carry no code (e.g. HTTPParserError for an unparseable status line).
      if (code === '') {
        const name = (err as { name?: unknown } | null)?.name;
        if (name === 'HTTPParserError' || name === 'ResponseContentLengthMismatchError') return O.BAD_RESPONSE;
        if (name === 'SocketError') return O.RESET;
      }
      if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.startsWith('CERT_') || code.includes('SELF_SIGNED') ||
        code.startsWith('UNABLE_TO_') || code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code.startsWith('ERR_OSSL')) return O.TLS;
      return O.ERROR;
  }
}

/**
 * True when a complete HTTP response arrived (whatever its status), i.e. there is a response head
 * and a body to archive: 'ok', redirects, 3xx/4xx/429/5xx, and 2xx whose body was rejected or
 * undecodable. False for transport failures (DNS, connect, timeouts, resets, malformed HTTP).
 */
export function isHttpResponse(r: FetchResult): boolean {
  if (r.status === undefined || r.responseHead === undefined) return false;
  switch (r.outcome) {
    case O.OK: case O.REDIRECT: case O.HTTP_3XX: case O.HTTP_4XX: case O.HTTP_429: case O.HTTP_5XX:
    case O.DECODE: case O.BOMB: case O.CONTENT_TYPE:
      return true;
    default:
      return false;
  }
}

export function statusOutcome(s: number): FetchOutcomeCode {
  if (s >= 200 && s < 300) return O.OK;
  if (s === 301 || s === 302 || s === 303 || s === 307 || s === 308) return O.REDIRECT;
  if (s >= 300 && s < 400) return O.HTTP_3XX;
  if (s === 429) return O.HTTP_429;
  if (s >= 400 && s < 500) return O.HTTP_4XX;
  if (s >= 500 && s < 600) return O.HTTP_5XX;
  return O.BAD_RESPONSE;
}

const CRLF = Buffer.from('\r\n');
const COLON_SP = Buffer.from(': ');
const TE_RENAMED = Buffer.from('X-Crawler-Transfer-Encoding');

export function buildResponseHead(status: number, statusText: string, raw: Buffer[]): Uint8Array {
  const parts: Buffer[] = [Buffer.from(`HTTP/1.1 ${status}${statusText.length > 0 ? ' ' + statusText : ' '}\r\n`, 'latin1')];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const isTE = name.length === 17 && name.toString('latin1').toLowerCase() === 'transfer-encoding';
    parts.push(isTE ? TE_RENAMED : name, COLON_SP, raw[i + 1]!, CRLF);
  }
  parts.push(CRLF);
  return Buffer.concat(parts);
}
