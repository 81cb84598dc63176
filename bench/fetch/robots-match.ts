/**
 * robots.txt parse and match speed (run by `npm run bench:fetch -- --robots`): the matcher is called
 * once per URL leaving the frontier, so it must cost well under a microsecond or two.
 *
 * Workload: a realistic 60-rule file (prefixes, `*`, `$`, percent-escapes, several groups) parsed
 * and compiled for our agent once, then 200,000 synthetic URL paths; a hostile file (2,000-`*`
 * pattern) against 20 KB paths; and parsing a 500 KiB file. Baseline: the same rules as
 * anchored RegExps, longest-match loop (what a "regex guess" implementation does).
 */
import os from 'node:os';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRobotsTxt, compileRobots } from '../../src/robots/index.js';

export async function runRobotsBench(outFile: string): Promise<void> {
  const rules: string[] = [];
  const words = ['search', 'cgi-bin', 'private', 'tmp', 'admin', 'cart', 'login', 'api', 'static', 'user'];
  for (let i = 0; i < 60; i++) {
    const w = words[i % words.length]!;
    const kind = i % 4;
    const pat = kind === 0 ? `/${w}/${i}` : kind === 1 ? `/*/${w}*.php$` : kind === 2 ? `/${w}?*sid=` : `/${w}/%7E${i}/`;
    rules.push(`${i % 5 === 0 ? 'Allow' : 'Disallow'}: ${pat}`);
  }
  const body = `User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n\nUser-agent: drumcrawl\n${rules.join('\n')}\nCrawl-delay: 1\n`;
  const compiled = compileRobots(parseRobotsTxt(body), 'drumcrawl/0.1');
  const paths: string[] = [];
  for (let i = 0; i < 200_000; i++) {
    const w = words[(i * 7) % words.length]!;
    paths.push(i % 3 === 0 ? `/${w}/${i % 97}/page-${i}.html` : i % 3 === 1 ? `/a/b/${w}${i % 13}.php` : `/${w}?q=${i}&sid=${i % 5}`);
  }
  const res: Record<string, unknown> = {};
  // Matcher.
  let allowed = 0;
  for (let rep = 0; rep < 2; rep++) for (const p of paths) if (compiled.isAllowed(p)) allowed++; // warm-up
  let t0 = performance.now();
  allowed = 0;
  for (let rep = 0; rep < 5; rep++) for (const p of paths) if (compiled.isAllowed(p)) allowed++;
  let ms = performance.now() - t0;
  res.matcher = { rules: compiled.ruleCount, checks: paths.length * 5, checksPerSec: Math.round((paths.length * 5) / ms * 1000), nsPerCheck: Math.round((ms * 1e6) / (paths.length * 5)), allowedShare: Number((allowed / (paths.length * 5)).toFixed(3)) };
  // Regex baseline (same rules, longest match).
  const re = rules.map((r) => {
    const allow = r.startsWith('Allow');
    const p = r.slice(r.indexOf(':') + 2);
    const anchored = p.endsWith('$');
    const b = anchored ? p.slice(0, -1) : p;
    return { allow, len: p.length, re: new RegExp('^' + b.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + (anchored ? '$' : '')) };
  });
  const regexAllowed = (p: string): boolean => {
    let best = -1, allow = true;
    for (const r of re) if (r.re.test(p) && (r.len > best || (r.len === best && r.allow))) { best = r.len; allow = r.allow; }
    return allow;
  };
  for (const p of paths) regexAllowed(p);
  t0 = performance.now();
  let regexAllowedCount = 0;
  for (let rep = 0; rep < 5; rep++) for (const p of paths) if (regexAllowed(p)) regexAllowedCount++;
  ms = performance.now() - t0;
  let agree = 0;
  for (const p of paths) if (regexAllowed(p) === compiled.isAllowed(p)) agree++;
  const regexNs = Math.round((ms * 1e6) / (paths.length * 5));
  res.regexBaseline = { note: 'one anchored RegExp per rule, longest-match loop', nsPerCheck: regexNs, agreementWithMatcher: Number((agree / paths.length).toFixed(4)) };
  res.speedupOverRegex = Number((regexNs / (res.matcher as { nsPerCheck: number }).nsPerCheck).toFixed(2));
  // Hostile pattern.
  const hostile = compileRobots(parseRobotsTxt(`User-agent: *\nDisallow: /${'a*'.repeat(2000)}b$\n`), 'x');
  const longPath = '/' + 'a'.repeat(20_000);
  t0 = performance.now();
  for (let i = 0; i < 50; i++) hostile.isAllowed(longPath);
  res.hostilePattern = { stars: 2000, pathBytes: 20_001, msPerCheck: Number(((performance.now() - t0) / 50).toFixed(3)) };
  // Parse 500 KiB.
  let big = 'User-agent: *\n';
  let i = 0;
  while (big.length < 500 * 1024) big += `Disallow: /dir${i++}/*.html$\n`;
  const bytes = new TextEncoder().encode(big);
  parseRobotsTxt(bytes);
  t0 = performance.now();
  for (let k = 0; k < 5; k++) compileRobots(parseRobotsTxt(bytes), 'drumcrawl');
  ms = (performance.now() - t0) / 5;
  res.parse500KiB = { bytes: bytes.length, rules: i, msPerParseAndCompile: Number(ms.toFixed(1)), mbPerSec: Number((bytes.length / 1e6 / (ms / 1000)).toFixed(1)), serializedBytes: compileRobots(parseRobotsTxt(bytes), 'drumcrawl').serialize().length };
  const out = {
    bench: 'fetch-robots-match',
    command: 'npm run bench:fetch -- --robots',
    date: new Date().toISOString(),
    machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version },
    ...res,
    note: 'Shared 2-core machine with several engineers working at once: absolute numbers are low and noisy.',
  };
  console.log(JSON.stringify(out, null, 2));
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(out, null, 2) + '\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runRobotsBench(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../results/fetch-robots-match.json'));
}
