/** Every subcommand registers itself here; each lives in its own file beside this one. */
import type { Command } from 'commander';

export function registerCommands(_program: Command): void {
  // Commands are added as their modules land (simweb, crawl, resume, stats, demo).
}
