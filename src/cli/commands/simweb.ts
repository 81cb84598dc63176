/**
 * `drumcrawl simweb`: serve a simulated web (HTTP on 127/8 simulated IPs + authoritative DNS on
 * 127.0.0.1) until SIGINT/SIGTERM. Prints the seed URLs and the DNS address. Thin: flags are turned
 * into SimwebOptions by `simwebOptionsFromFlags` (pure, tested) and handed to startSimweb.
 */
import type { Command } from 'commander';
import type { SimwebOptions } from '../../simweb/index.js';
import { DEFAULT_PARAMS, PRESETS, resolveParams, type SimwebPreset, type WebParams } from '../../simweb/model/params.js';
import { CrawlError } from '../../errors.js';
import { runGuarded } from './common.js';

export interface SimwebFlags {
  preset?: string;
  seed?: string;
  httpPort?: string;
  dnsPort?: string;
  param?: string[];
  log?: boolean;
  json?: boolean;
}

/** A bad flag value: the same code as the crawl command's (docs/errors.md). */
function badFlag(message: string): CrawlError {
  return new CrawlError('CRAWL_CONFIG_INVALID', message);
}

function int(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\s*-?\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw badFlag( `--${name} must be an integer in [${min}, ${max}], got '${v}'`);
  }
  return n;
}

/**
 * Flags → SimwebOptions. `--param key=value` (value parsed as JSON when it is JSON, else a string).
 * Validates everything the web generator would (resolveParams) before a socket is bound.
 */
export function simwebOptionsFromFlags(f: SimwebFlags): SimwebOptions {
  const preset = (f.preset ?? 'demo') as SimwebPreset;
  if (!Object.hasOwn(PRESETS, preset)) throw badFlag(`--preset must be one of ${Object.keys(PRESETS).join(', ')} (got ${JSON.stringify(preset)})`);
  const params: Record<string, unknown> = {};
  for (const kv of f.param ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw badFlag(`--param expects key=value, got '${kv}'`);
    const key = kv.slice(0, eq);
    if (!Object.hasOwn(DEFAULT_PARAMS, key)) throw badFlag(`--param ${key} is not a simweb parameter (known: ${Object.keys(DEFAULT_PARAMS).join(', ')})`);
    const raw = kv.slice(eq + 1);
    let value: unknown;
    try { value = JSON.parse(raw); } catch { value = raw; }
    params[key] = value;
  }
  resolveParams(preset, params as Partial<WebParams>);
  const opts: SimwebOptions = { preset, params: params as Partial<WebParams>, log: f.log ?? true };
  const seed = int('seed', f.seed, -(2 ** 31), 2 ** 31 - 1);
  const httpPort = int('http-port', f.httpPort, 0, 65535);
  const dnsPort = int('dns-port', f.dnsPort, 0, 65535);
  if (seed !== undefined) opts.seed = seed;
  if (httpPort !== undefined) opts.httpPort = httpPort;
  if (dnsPort !== undefined) opts.dnsPort = dnsPort;
  return opts;
}

export function registerSimwebCommand(program: Command): void {
  program
    .command('simweb')
    .description('serve a deterministic simulated web (HTTP on 127/8 + authoritative DNS) until stopped')
    .option('--preset <name>', `web preset: ${Object.keys(PRESETS).join(', ')}`, 'demo')
    .option('--seed <n>', 'generator seed', '1')
    .option('--http-port <n>', 'port on every simulated IP (0 = pick a free one)', '0')
    .option('--dns-port <n>', 'UDP port of the DNS server on 127.0.0.1 (0 = pick a free one)', '0')
    .option('--param <key=value>', 'override a WebParams field (repeatable; JSON values)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--no-log', 'do not keep the request log')
    .option('--json', 'print the startup information as one JSON line')
    .action(async (flags: SimwebFlags) => runGuarded(async () => {
      const opts = simwebOptionsFromFlags(flags);
      // The servers' modules are loaded once the flags passed (refusing bad input stays quick).
      const { startSimweb } = await import('../../simweb/index.js');
      const sw = await startSimweb(opts);
      const info = {
        dns: sw.dnsServer, httpPort: sw.httpPort, ips: sw.ips.length, seeds: sw.seeds,
        // Summing page counts walks every PLD: fine up to a million of them, skipped beyond.
        pages: sw.web.params.plds <= 1_000_000 ? sw.web.totalPages() : null, preset: flags.preset ?? 'demo',
      };
      if (flags.json) process.stdout.write(JSON.stringify(info) + '\n');
      else {
        process.stdout.write(`simweb (${info.preset}): ${info.pages ?? 'many'} pages on ${sw.ips.length} IPs (${sw.ips[0]} …), HTTP port ${sw.httpPort}\n`);
        process.stdout.write(`DNS server: ${sw.dnsServer}\nSeeds:\n${sw.seeds.map((s) => `  ${s}`).join('\n')}\n`);
        process.stdout.write('Press Ctrl-C to stop.\n');
      }
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await sw.close();
      const st = sw.connectionStats();
      process.stderr.write(`simweb: stopped after ${sw.log.total} requests on ${st.accepted} connections\n`);
    }));
}
