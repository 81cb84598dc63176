// Test entry: a commander program with only the simweb command (the real CLI wires it in index.ts).
import { Command } from 'commander';
import { registerSimwebCommand } from '../../src/cli/commands/simweb.js';
const program = new Command().name('drumcrawl');
registerSimwebCommand(program);
await program.parseAsync(process.argv);
