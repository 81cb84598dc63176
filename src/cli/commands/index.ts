/** Every subcommand registers itself here; each lives in its own file beside this one. */
import type { Command } from 'commander';
import { registerCrawlCommand } from './crawl.js';
import { registerResumeCommand } from './resume.js';
import { registerStatsCommand } from './stats.js';
import { registerDemoCommand } from './demo.js';
import { registerSimwebCommand } from './simweb.js';
import { registerClusterCommand } from './cluster.js';

export function registerCommands(program: Command): void {
  registerCrawlCommand(program);
  registerResumeCommand(program);
  registerStatsCommand(program);
  registerDemoCommand(program);
  registerSimwebCommand(program);
  registerClusterCommand(program);
}
