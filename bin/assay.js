#!/usr/bin/env node
// The CLI entry point. In this repository Node runs the TypeScript sources directly (type stripping);
// an installed package (under node_modules, where Node strips no types) runs the built JavaScript.
import module from 'node:module';
import { nodeVersionProblem } from './node-version.js';

// V8's code cache of every module (Node's type stripping included) in the OS temp directory: `assay run`
// starts once per managed run, and loading its modules from source took about three quarters of its
// start-up. Node checks each entry against its source; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  process.stderr.write(problem + '\n');
  process.exitCode = 2;
} else {
  const installed = import.meta.url.includes('/node_modules/');
  await import(installed ? '../dist/src/cli/main.js' : '../src/cli/main.ts');
}
