/**
 * The robots.txt files of the simulated web (RFC 9309 as served): the rule groups a host's file
 * carries, its text, and the body served for each robots variant ('rules', 'huge', 'garbage',
 * 'allow-all'; the other variants are answered by the HTTP server without a body of rules).
 *
 * Invariant: the text served and the groups the oracle (WebGraph.robotsAllows) evaluates are made
 * from the same hash, so the ground truth matches what a conforming parser reads. Cost: O(rules)
 * per file; 'huge' is ~600 KiB.
 */
import { h3, hashString, unit } from './hash.js';
import type { WebParams } from './params.js';
import type { RobotsGroup } from './robots-model.js';
import { S_RULES, type HostInfo } from './host-info.js';

/** The groups of the robots.txt this host's rules come from ('rules', 'huge', 'redirect'); [] otherwise. */
export function robotsGroups(seed: number, params: Readonly<WebParams>, info: HostInfo): RobotsGroup[] {
  if (info.robots !== 'rules' && info.robots !== 'huge' && info.robots !== 'redirect') return [];
  const h = h3(seed ^ S_RULES, info.pldIndex, info.hostIndex);
  const d1 = 1 + (h % 9), d2 = (h >>> 4) % 10, d3 = (h >>> 8) % 10, d4 = 1 + ((h >>> 12) % 9);
  const withAgent = ((h >>> 16) & 3) !== 0;
  const delay = unit(h3(seed ^ S_RULES, info.pldIndex, info.hostIndex + 0x10000)) < params.crawlDelayShare
    ? params.crawlDelaySeconds : undefined;
  const specific: RobotsGroup['rules'] = [
    { allow: false, pattern: `/p/${d1}` },
    { allow: true, pattern: `/p/${d1}${d2}` },
    { allow: false, pattern: `/*${d3}$` },
    { allow: false, pattern: '/*?' },
    { allow: false, pattern: '/cal/' },
  ];
  const groups: RobotsGroup[] = [{ agents: ['otherbot'], rules: [{ allow: false, pattern: '/' }] }];
  if (withAgent) {
    const g: RobotsGroup = { agents: [params.robotsAgent], rules: specific };
    if (delay !== undefined) g.crawlDelay = delay;
    groups.push(g);
    groups.push({ agents: ['*'], rules: [{ allow: false, pattern: `/p/${d4}` }, { allow: false, pattern: '/private/' }] });
  } else {
    const g: RobotsGroup = { agents: ['*'], rules: specific };
    if (delay !== undefined) g.crawlDelay = delay;
    groups.push(g);
  }
  return groups;
}

/** The text of the rules this host's robots file carries (for 'rules', 'huge' and the redirect target). */
export function robotsRulesText(seed: number, params: Readonly<WebParams>, info: HostInfo): string {
  const h = h3(seed ^ S_RULES, info.pldIndex, info.hostIndex + 0x20000);
  const ua = (h & 1) ? 'User-agent' : 'user-agent';
  const dis = (h & 2) ? 'Disallow' : 'DISALLOW';
  let s = `# robots.txt for ${info.name} (simweb seed ${seed})\n`;
  for (const g of robotsGroups(seed, params, info)) {
    for (const a of g.agents) s += `${ua}: ${a}\n`;
    for (const r of g.rules) s += `${r.allow ? 'Allow' : dis}: ${r.pattern}\n`;
    if (g.crawlDelay !== undefined) s += `Crawl-delay: ${g.crawlDelay}\n`;
    s += '\n';
  }
  return s;
}

/** Body of /robots.txt for the 200 variants ('allow-all', 'rules', 'huge', 'garbage'). */
export function robotsBody(seed: number, params: Readonly<WebParams>, info: HostInfo): Buffer {
  switch (info.robots) {
    case 'rules':
      return Buffer.from(robotsRulesText(seed, params, info), 'latin1');
    case 'huge': {
      const head = robotsRulesText(seed, params, info);
      const line = '# padding padding padding padding padding padding padding padding padding padding\n';
      const n = Math.ceil((600 * 1024) / line.length);
      return Buffer.from(head + line.repeat(n), 'latin1');
    }
    case 'garbage': {
      const b = Buffer.allocUnsafe(4096);
      for (let i = 0; i < b.length; i++) {
        // bytes 0x80–0xff and C0 controls except \n: never an ASCII letter, ':' or '/'
        const v = h3(seed ^ S_RULES, hashString(0, info.name), i) & 0xff;
        b[i] = v < 0x80 ? (v & 0x1f) === 10 ? 0 : v & 0x1f : v;
      }
      return b;
    }
    default:
      return Buffer.from(`# robots.txt for ${info.name}: everything allowed\nUser-agent: *\nDisallow:\n`, 'latin1');
  }
}
