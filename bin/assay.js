#!/usr/bin/env node
// The CLI entry point. In this repository Node runs the TypeScript sources directly (type stripping);
// an installed package (under node_modules, where Node strips no types) runs the built JavaScript.
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  process.stderr.write(problem + '\n');
  process.exitCode = 2;
} else {
  const installed = import.meta.url.includes('/node_modules/');
  await import(installed ? '../dist/src/cli/main.js' : '../src/cli/main.ts');
}
