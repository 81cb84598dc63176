/** The command line as typed after a command's name (crawl, resume and cluster pass it on whole). */
import type { Command } from 'commander';

/** The user's arguments after the subcommand name (commander keeps them in rawArgs). */
export function rawArgsAfter(program: Command, name: string): string[] {
  const all = (program as unknown as { rawArgs: string[] }).rawArgs.slice(2);
  const i = all.indexOf(name);
  return i < 0 ? [] : all.slice(i + 1);
}
