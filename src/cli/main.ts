#!/usr/bin/env node
/**
 * The drumcrawl command line. Thin by design: each command lives in src/cli/commands/, parses its
 * flags into the library's validated config, and calls the library.
 */
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { registerCommands } from './commands/index.js';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('drumcrawl')
    .description('A single-server, IRLbot-style web crawler (DRUM, STAR, BEAST, politeness, WARC).')
    .version(packageVersion());
  registerCommands(program);
  return program;
}

await buildProgram().parseAsync(process.argv);
