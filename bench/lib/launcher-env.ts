/**
 * The process environment bin/drumcrawl gives the crawler: glibc malloc settings (fewer arenas, a
 * fixed mmap threshold) that must be set before node starts (the launcher's header says why and
 * what they saved). Benches that run the crawler without the launcher (bench:e2e runs it in its
 * own process; bench:peers starts the launcher itself) apply them so that RSS and CPU are what a
 * user of `drumcrawl` gets. The values are read from the launcher, so there is one source: its
 * `: "${NAME:=value}"` lines. A value already in `env` wins, as in the launcher.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const LAUNCHER = fileURLToPath(new URL('../../bin/drumcrawl', import.meta.url));

/** `NAME → value` of the launcher's defaulted variables. */
export function launcherDefaults(script: string = readFileSync(LAUNCHER, 'utf8')): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of script.matchAll(/^: "\$\{([A-Z_]+):=([^}]*)\}"$/gm)) out[m[1]!] = m[2]!;
  return out;
}

/** `env` with the launcher's defaults where it has none of its own. */
export function launcherEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...launcherDefaults(), ...env };
}

/** Whether this process started with every launcher variable set (glibc reads them at start). */
export function startedWithLauncherEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return Object.keys(launcherDefaults()).every((k) => env[k] !== undefined);
}
