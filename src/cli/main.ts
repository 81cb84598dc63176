#!/usr/bin/env node
/**
 * The drumcrawl command line. Thin by design: each command lives in src/cli/commands/, parses its
 * flags into the library's validated config, and calls the library.
 *
 * Every error ends as one line `drumcrawl: CRAWL_<CODE>: <message>` on stderr and an exit status
 * (docs/errors.md): commander's own parse errors (unknown command or flag, missing value) become
 * CRAWL_CLI_USAGE with exit 2; anything that escapes a command becomes CRAWL_ERROR, exit 1.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { registerCommands } from './commands/index.js';
import { describeError, EXIT_USAGE } from './commands/common.js';
import { releaseWorkerHeapFlags } from '../budget/heap-budget.js';

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
    .version(packageVersion())
    // Subcommands inherit both settings (they are made after this point): commander's errors are
    // thrown as CommanderError instead of exiting, and printed once, by main, with a CRAWL_ code.
    .exitOverride()
    .configureOutput({ outputError: () => undefined });
  registerCommands(program);
  return program;
}

function fatal(e: unknown): never {
  const { line, exit } = describeError(e);
  process.stderr.write(line);
  process.exit(exit);
}

process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);
// The heap limits bin/drumcrawl gave node are for this thread only (src/budget/heap-budget.ts).
releaseWorkerHeapFlags();

try {
  await buildProgram().parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // --help and --version end here too, with exit code 0.
    if (e.exitCode === 0) process.exit(0);
    process.stderr.write(`drumcrawl: CRAWL_CLI_USAGE: ${e.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ')} (see drumcrawl --help)\n`);
    process.exit(EXIT_USAGE);
  }
  fatal(e);
}
