/**
 * Extra request headers from the CLI (`--header 'Name: value'`, repeatable) or the config file
 * (`headers`: a list of such lines, or an object of name → value). They are validated here, once,
 * so that a bad header is refused before the crawl starts (CRAWL_CONFIG_INVALID, exit 2) rather
 * than failing every request later inside undici.
 *
 * Rules (RFC 9110 §5.1, §5.5):
 * - the name is a token (letters, digits and ``!#$%&'*+-.^_`|~``);
 * - the value holds no CR, LF or NUL (one header must stay one line on the wire and in the WARC
 *   request record) and no other control character except TAB; surrounding blanks are trimmed;
 * - names the fetcher sets itself are refused: `Host`, `User-Agent` (use --user-agent: its first
 *   token is also the robots.txt agent), `Accept`, `Accept-Encoding` (the fetcher decodes only what
 *   it asks for), and the connection-level and framing headers (`Connection`, `Keep-Alive`,
 *   `Content-Length`, `Transfer-Encoding`, `TE`, `Trailer`, `Upgrade`, `Expect`,
 *   `Proxy-Connection`), which would break the exchange;
 * - a name given twice is refused (case-insensitively): which one would win is not obvious.
 */
import { CrawlError } from '../errors.js';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Control characters other than TAB (and DEL): RFC 9110 field-value excludes them.
// eslint-disable-next-line no-control-regex -- control characters are what this pattern finds
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;

const RESERVED = new Map<string, string>([
  ['host', 'the fetcher sets Host from the URL'],
  ['user-agent', 'use --user-agent (its first token is also the robots.txt agent)'],
  ['accept', 'the fetcher sets Accept itself'],
  ['accept-encoding', 'the fetcher decodes only the encodings it asks for'],
  ['connection', 'connection-level header'],
  ['keep-alive', 'connection-level header'],
  ['proxy-connection', 'connection-level header'],
  ['upgrade', 'connection-level header'],
  ['te', 'connection-level header'],
  ['trailer', 'message framing header'],
  ['content-length', 'message framing header'],
  ['transfer-encoding', 'message framing header'],
  ['expect', 'the fetcher sends no request bodies'],
]);

function invalid(message: string, value: unknown): CrawlError {
  return new CrawlError('CRAWL_CONFIG_INVALID', `headers ${message}`, { details: { key: 'headers', value } });
}

/** One `Name: value` line → [name, value] (value trimmed), or CRAWL_CONFIG_INVALID saying why not. */
export function parseHeaderLine(line: string): [string, string] {
  const c = line.indexOf(':');
  const shown = JSON.stringify(line.length > 200 ? line.slice(0, 200) + '…' : line);
  if (c <= 0) throw invalid(`entries must look like "Name: value" (got ${shown})`, line);
  const name = line.slice(0, c);
  if (!TOKEN.test(name)) throw invalid(`entry ${shown}: the name must be an HTTP token (letters, digits, !#$%&'*+-.^_\`|~; no blanks)`, line);
  const value = line.slice(c + 1).replace(/^[ \t]+|[ \t]+$/g, '');
  if (BAD_VALUE.test(value)) throw invalid(`entry ${shown}: the value must not contain line breaks or control characters`, line);
  const why = RESERVED.get(name.toLowerCase());
  if (why !== undefined) throw invalid(`entry ${shown}: ${name} cannot be set (${why})`, line);
  return [name, value];
}

/**
 * The config value (a list of `Name: value` lines, one such string, or an object name → value)
 * as validated `Name: value` lines with single-space separators.
 */
export function normalizeHeaders(v: unknown): string[] {
  let lines: string[];
  if (typeof v === 'string') lines = [v];
  else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) lines = v as string[];
  else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    lines = Object.entries(v as Record<string, unknown>).map(([k, x]) => {
      if (typeof x !== 'string') throw invalid(`values must be strings (${JSON.stringify(k)} is ${x === null ? 'null' : typeof x})`, v);
      return `${k}: ${x}`;
    });
  } else throw invalid('must be a list of "Name: value" strings or an object of name → value', v);
  const seen = new Set<string>();
  return lines.map((l) => {
    const [name, value] = parseHeaderLine(l);
    const key = name.toLowerCase();
    if (seen.has(key)) throw invalid(`name ${JSON.stringify(name)} is given twice`, v);
    seen.add(key);
    return `${name}: ${value}`;
  });
}

/** Validated `Name: value` lines → the fetcher's `headers` option. */
export function headerRecord(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of lines) {
    const [name, value] = parseHeaderLine(l);
    out[name] = value;
  }
  return out;
}
