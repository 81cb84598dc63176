/**
 * The crawl configuration of the adversary measurements, in one place (bench/adversary and
 * test/e2e/adversary.solo.test.ts build every crawl from it): the crawler's CLI flags for a crawl of a
 * simweb over loopback. Delays are the issue's measurement's (τh = τh0 = 50 ms, τs = τs0 = 10 ms,
 * scaled down from the thesis' seconds so that a ~1,000-page good web is crawled in seconds);
 * every other setting — budgets, RAM, concurrency, BEAST — is the crawler's default.
 */
export const ADVERSARY_UA = 'drumcrawl-bench/0.1 (+https://example.test/bench)';

export interface AdversaryCrawlSpec {
  seeds: readonly string[];
  dnsServer: string;
  /** Scratch directory of this crawl (state and output go below it). */
  dir: string;
  /** Extra crawler flags (e.g. `--budget flat`). */
  extra?: readonly string[];
}

export function adversaryCrawlArgs(s: AdversaryCrawlSpec): string[] {
  return [
    ...s.seeds, '--dns-server', s.dnsServer, '--state', `${s.dir}/state`, '--out', `${s.dir}/out`,
    // simweb serves on loopback, which the network guard refuses unless allowed.
    '--allow-network', '127.0.0.0/8',
    // The adversary webs span many PLDs (the default scope, pld, would keep to the seeds').
    '--scope', 'any',
    '--user-agent', ADVERSARY_UA, '--max-pages', '1000000',
    '--host-delay', '50', '--min-host-delay', '50', '--ip-delay', '10', '--min-ip-delay', '10',
    '--warc-compression', 'none', '--progress', 'plain', '--progress-interval', '60000', '--checkpoint-interval', '600000',
    ...(s.extra ?? []),
  ];
}
