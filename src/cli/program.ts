// The `assay` command tree, declared with commander: every command, its arguments, options and help text.
// Declaring loads no command's module; an action imports its own when it runs, so `assay run` starts fast.
import type { Command } from 'commander';
import { addAssetsCommands } from './program/assets.ts';
import { addAuthCommands } from './program/auth.ts';
import { baseProgram } from './program/base.ts';
import { addExperimentsCommands } from './program/experiments.ts';
import { addOperatorCommands } from './program/operators.ts';
import { addOrganizationsCommands } from './program/organizations.ts';
import { addRunCommand } from './program/run.ts';
import { addRunsCommands } from './program/runs.ts';
import { addSearchCommand } from './program/search.ts';
import { addSweepsCommands } from './program/sweeps.ts';
import { addVariationsCommands } from './program/variations.ts';

/** The program; errors and help go through `exitOverride`, so main.ts decides the exit code. */
export function buildProgram(): Command {
  const program = baseProgram();
  program.commandsGroup('Researchers:');
  addAuthCommands(program);
  addExperimentsCommands(program);
  addVariationsCommands(program);
  addRunsCommands(program);
  addSweepsCommands(program);
  addAssetsCommands(program);
  addSearchCommand(program);
  addOrganizationsCommands(program);
  program.commandsGroup('Runners:');
  addRunCommand(program);
  program.commandsGroup('Operators:');
  addOperatorCommands(program);
  return program;
}
