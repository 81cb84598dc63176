/**
 * The generator's own model of robots.txt: the groups a host's file contains, its serialization,
 * and an independent matcher (RFC 9309: group by product token, longest match wins, Allow wins a tie,
 * `*` and `$` in patterns). This is the oracle the request-log checkers and `reachable()` use — it
 * deliberately shares no code with src/robots/, so a bug there cannot hide behind a bug here.
 */
export interface RobotsRule { allow: boolean; pattern: string; }
export interface RobotsGroup { agents: string[]; rules: RobotsRule[]; crawlDelay?: number; }

interface CompiledRule { allow: boolean; length: number; re: RegExp; }
const compiled = new WeakMap<RobotsRule, CompiledRule>();

function compile(rule: RobotsRule): CompiledRule {
  let c = compiled.get(rule);
  if (c) return c;
  let p = rule.pattern;
  const anchored = p.endsWith('$');
  if (anchored) p = p.slice(0, -1);
  const src = p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  c = { allow: rule.allow, length: rule.pattern.length, re: new RegExp('^' + src + (anchored ? '$' : '')) };
  compiled.set(rule, c);
  return c;
}

/** The product token of a User-Agent string: up to the first '/', space or ';', lower-cased. */
export function productToken(userAgent: string): string {
  const m = /^[^/\s;]*/.exec(userAgent.trim());
  return (m ? m[0] : '').toLowerCase();
}

/** Groups that apply to `userAgent`: all groups naming its token, else all '*' groups (merged). */
export function selectGroups(groups: readonly RobotsGroup[], userAgent: string): RobotsGroup[] {
  const token = productToken(userAgent);
  const mine = groups.filter((g) => g.agents.some((a) => a.toLowerCase() === token));
  if (mine.length > 0) return mine;
  return groups.filter((g) => g.agents.includes('*'));
}

/** RFC 9309 §2.2.2: the most specific (longest) matching rule decides; Allow wins ties; no match = allowed. */
export function groupsAllow(groups: readonly RobotsGroup[], pathAndQuery: string): boolean {
  let best = -1;
  let allow = true;
  for (const g of groups) {
    for (const r of g.rules) {
      if (r.pattern === '') continue; // an empty Disallow allows everything
      const c = compile(r);
      if (!c.re.test(pathAndQuery)) continue;
      if (c.length > best || (c.length === best && c.allow)) {
        best = c.length;
        allow = c.allow;
      }
    }
  }
  return allow;
}

export function groupsCrawlDelay(groups: readonly RobotsGroup[]): number | undefined {
  for (const g of groups) if (g.crawlDelay !== undefined) return g.crawlDelay;
  return undefined;
}
