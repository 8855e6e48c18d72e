// `assay run` alone, for the runner's bundle (scripts/build-runner.ts): a few files that Node reads and
// compiles at once, instead of resolving and loading each of the modules `assay run` needs on every managed
// run. The local provider spawns it with its own Node, which bin/assay.js's version check has passed already.
import module from 'node:module';

// As bin/assay.js does: V8's code cache of what is loaded after this line (the bundle's chunks,
// imported below).
module.enableCompileCache?.();

const argv = process.argv.slice(2);
if (argv[0] === 'run-slot') {
  // A local slot's long-lived runner (src/compute/local-slots.ts).
  await (await import('./run-slot.ts')).runSlot(argv.slice(1));
} else {
  const { runCli, runProgram } = await import('./cli-entry.ts');
  await runCli(argv, async () => runProgram());
}
