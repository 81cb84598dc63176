/**
 * startSimweb: the generator, the HTTP listeners (one per simulated IP, all on one port) and the
 * DNS server, wired together. See docs/simweb.md.
 */
import { WebGraph, ipString } from './model/graph.js';
import { RequestLog } from './request-log.js';
import { SimHttpServer, type ConnectionStats } from './http-server.js';
import { SimDnsServer, type DnsStats } from './dns-server.js';
import { CrawlError } from '../errors.js';
import { resolveParams, type SimwebPreset, type WebParams } from './model/params.js';

export interface SimwebOptions {
  preset?: SimwebPreset;
  /** Generator seed (default 1). */
  seed?: number;
  /** Overrides on top of the preset. */
  params?: Partial<WebParams>;
  /** 0 = pick a free port, the same port on every simulated IP (default 0). */
  httpPort?: number;
  /** 0 = free (default 0). The DNS server listens on 127.0.0.1. */
  dnsPort?: number;
  /** Keep the request log (default true). */
  log?: boolean;
  /** Ring-buffer capacity of the request log (default 200,000 entries). */
  logCapacity?: number;
}

export interface Simweb {
  /** '127.0.0.1:PORT' — give to node:dns Resolver#setServers. */
  readonly dnsServer: string;
  readonly dnsPort: number;
  /** Every simulated IP listens on this port; URLs carry it. */
  readonly httpPort: number;
  /** Absolute seed URLs. */
  readonly seeds: string[];
  readonly web: WebGraph;
  readonly log: RequestLog;
  /** Every simulated IP (one listener each). */
  readonly ips: string[];
  /** Live connection counts (incl. idle keep-alive connections) per IP. */
  connectionStats(): ConnectionStats;
  dnsStats(): DnsStats;
  /** Sets the pause between the pieces of trickled answers, those under way included (a web that heals). */
  setTrickleInterval(ms: number): void;
  close(): Promise<void>;
}

export async function startSimweb(opts: SimwebOptions = {}): Promise<Simweb> {
  const params = resolveParams(opts.preset, opts.params);
  const seed = opts.seed ?? 1;
  const log = new RequestLog({ capacity: opts.logCapacity ?? 200_000, enabled: opts.log ?? true });
  const ips: string[] = [];
  const ipCount = params.ips + (params.spamFarms > 0 ? Math.floor(params.spamIps) : 0); // farms' own IPs follow the web's
  for (let k = 0; k < ipCount; k++) ips.push(ipString(k));
  if (params.v6Share > 0) ips.push('::1'); // the IPv6-only hosts (WebParams.v6Share)
  let web!: WebGraph;
  const http = await SimHttpServer.listen(ips, opts.httpPort ?? 0, (port) => {
    web = new WebGraph(params, seed, port);
    return { web, log };
  });
  let dns: SimDnsServer;
  try {
    dns = await SimDnsServer.listen(web, opts.dnsPort ?? 0);
  } catch (err) {
    await http.close();
    throw new CrawlError('CRAWL_SIMWEB_LISTEN', `simweb: cannot listen for DNS on 127.0.0.1:${opts.dnsPort ?? 0}: ${(err as Error).message}`, { cause: err });
  }
  let closing: Promise<void> | null = null;
  return {
    dnsServer: `127.0.0.1:${dns.port}`,
    dnsPort: dns.port,
    httpPort: http.port,
    seeds: web.seeds(),
    web,
    log,
    ips: web.ipAddresses(),
    connectionStats: () => http.connectionStats(),
    dnsStats: () => ({ ...dns.stats }),
    setTrickleInterval: (ms: number) => {
      http.trickleIntervalMs = ms;
    },
    close: () => (closing ??= Promise.all([http.close(), dns.close()]).then(() => undefined)),
  };
}
