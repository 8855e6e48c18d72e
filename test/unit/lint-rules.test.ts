// The import rules between the repo's parts (docs/architecture.md, "Packages and import rules") fire on a
// deliberate violation: linted through ESLint's API with the repository's own eslint.config.js.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Only the import rules: they need no type information, so a snippet need not be a file of the TS project.
const eslint = new ESLint({
  cwd: root,
  ignore: false,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) =>
    ruleId.startsWith('import-x/') || ruleId === '@typescript-eslint/no-restricted-imports',
});

/** The messages of one rule for `code` linted as if it were the file at `filePath` (relative to the repo). */
async function violations(code: string, filePath: string, rule: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result!.messages.filter((m) => m.ruleId === rule).map((m) => m.message);
}

const RESTRICTED = 'import-x/no-restricted-paths';

describe('import rules', () => {
  it('refuses the client importing the service, the CLI, compute or the orchestrator', async () => {
    for (const target of [
      '../server/app.ts',
      '../cli/main.ts',
      '../compute/compute-provider.ts',
      '../orchestrator/orchestrator-config.ts',
    ]) {
      const found = await violations(
        `import * as m from '${target}';\nexport { m };\n`,
        'src/client/x.ts',
        RESTRICTED,
      );
      assert.equal(found.length, 1, `src/client → ${target} was let through`);
      assert.match(found[0]!, /published on its own/);
    }
  });

  it('lets the client import itself and the contract', async () => {
    const code =
      "import { path } from './core/path.ts';\nimport * as contract from '@assay/contract';\nexport { path, contract };\n";
    assert.deepEqual(await violations(code, 'src/client/x.ts', RESTRICTED), []);
  });

  it('refuses the contract importing anything in the repository', async () => {
    const found = await violations(
      "import { Client } from '../client/index.ts';\nexport { Client };\n",
      'src/contract/x.ts',
      RESTRICTED,
    );
    assert.equal(found.length, 1);
    assert.match(found[0]!, /depends on nothing/);
  });

  it('refuses compute and the orchestrator glue importing the service', async () => {
    const code = "import { buildApp } from '../server/app.ts';\nexport { buildApp };\n";
    assert.equal((await violations(code, 'src/compute/x.ts', RESTRICTED)).length, 1);
    assert.equal((await violations(code, 'src/orchestrator/x.ts', RESTRICTED)).length, 1);
  });

  it('refuses settings importing anything of the repository but the contract', async () => {
    const server = "import { loadConfig } from '../server/config.ts';\nexport { loadConfig };\n";
    const found = await violations(server, 'src/settings/x.ts', RESTRICTED);
    assert.equal(found.length, 1);
    assert.match(found[0]!, /only @assay\/contract/);
    const contract = "import { LAUNCH_PATTERNS } from '@assay/contract';\nexport { LAUNCH_PATTERNS };\n";
    assert.deepEqual(await violations(contract, 'src/settings/x.ts', RESTRICTED), []);
  });

  it('refuses the service importing the CLI, the client, the worker, activities or workflows', async () => {
    for (const target of [
      '../cli/main.ts',
      '../client/index.ts',
      '../worker.ts',
      '../../workflows/definitions.ts',
    ]) {
      const code = `import * as m from '${target}';\nexport { m };\n`;
      const found = await violations(code, 'src/server/x.ts', RESTRICTED);
      assert.equal(found.length, 1, `src/server → ${target} was let through`);
      assert.match(found[0]!, /The service imports/);
    }
  });

  it("holds each of the service's feature folders to the layers below it", async () => {
    const up =
      "import { provisionRun } from '../orchestration/provision-service.ts';\nexport { provisionRun };\n";
    const found = await violations(up, 'src/server/runs/x.ts', RESTRICTED);
    assert.equal(found.length, 1, 'runs → orchestration was let through');
    assert.match(found[0]!, /src\/server\/runs may import only/);
    const auth =
      "import { storeOrchestratorKey } from '../orchestration/orchestrator-keys.ts';\nexport { storeOrchestratorKey };\n";
    assert.equal(
      (await violations(auth, 'src/server/auth/x.ts', RESTRICTED)).length,
      1,
      'auth → orchestration',
    );
    const top = "import { buildApp } from '../app.ts';\nexport { buildApp };\n";
    assert.equal((await violations(top, 'src/server/sweeps/x.ts', RESTRICTED)).length, 1, 'sweeps → app.ts');
    const down =
      "import { toApi } from '../runs/run-service.ts';\nimport type { ServiceConfig } from '../config.ts';\nexport { toApi, type ServiceConfig };\n";
    assert.deepEqual(await violations(down, 'src/server/orchestration/x.ts', RESTRICTED), []);
  });

  it('lets only orchestration and sweeps of the service use the Temporal glue', async () => {
    const code =
      "import { managedRunWorkflowId } from '../../orchestrator/orchestrator.ts';\nexport { managedRunWorkflowId };\n";
    const found = await violations(code, 'src/server/runs/x.ts', RESTRICTED);
    assert.equal(found.length, 1, 'runs → src/orchestrator was let through');
    assert.match(found[0]!, /RunEvents/);
    assert.deepEqual(await violations(code, 'src/server/orchestration/x.ts', RESTRICTED), []);
  });

  it("refuses the CLI and the activities reaching into the client's internals", async () => {
    const deep = "import { Transport } from '../client/core/transport.ts';\nexport { Transport };\n";
    const found = await violations(deep, 'src/cli/x.ts', RESTRICTED);
    assert.equal(found.length, 1, 'src/cli → client/core was let through');
    assert.match(found[0]!, /top-level modules/);
    const activity = "import { path } from '../src/client/core/path.ts';\nexport { path };\n";
    assert.equal(
      (await violations(activity, 'activities/x.ts', RESTRICTED)).length,
      1,
      'activities → client/core',
    );
    const entry =
      "import { Transport } from '../client/transport.ts';\nimport { Client } from '../client/index.ts';\nexport { Transport, Client };\n";
    assert.deepEqual(await violations(entry, 'src/cli/x.ts', RESTRICTED), []);
  });

  it('lets workflows import activities as types only', async () => {
    const asType = "import type { Activities } from '../activities/index.ts';\nexport type A = Activities;\n";
    const asValue =
      "import { createActivities } from '../activities/index.ts';\nexport { createActivities };\n";
    const rule = '@typescript-eslint/no-restricted-imports';
    assert.deepEqual(await violations(asType, 'workflows/x.ts', rule), []);
    assert.equal((await violations(asValue, 'workflows/x.ts', rule)).length, 1);
    const client = "import { Client } from '../src/client/index.ts';\nexport { Client };\n";
    assert.equal((await violations(client, 'workflows/x.ts', RESTRICTED)).length, 1);
  });

  it("keeps TypeBox out of the web UI: the contract's index for types only, values from its plain entries", async () => {
    const rule = '@typescript-eslint/no-restricted-imports';
    const asType = "import type { RunState } from '@assay/contract';\nexport type S = RunState;\n";
    const fromIndex = "import { RUN_STATES } from '@assay/contract';\nexport { RUN_STATES };\n";
    const fromEnums = "import { RUN_STATES } from '@assay/contract/enums';\nexport { RUN_STATES };\n";
    assert.deepEqual(await violations(asType, 'src/web/ui/x.ts', rule), []);
    assert.deepEqual(await violations(fromEnums, 'src/web/ui/x.ts', rule), []);
    const found = await violations(fromIndex, 'src/web/ui/x.ts', rule);
    assert.equal(found.length, 1);
    assert.match(found[0]!, /loads TypeBox/);
  });

  it('refuses an import cycle, a lazy import() included', async () => {
    const results = await eslint.lintFiles([
      'test/fixtures/lint/cycle/left.ts',
      'test/fixtures/lint/cycle/lazy-opener.ts',
    ]);
    for (const result of results) {
      const cycles = result.messages.filter((m) => m.ruleId === 'import-x/no-cycle');
      assert.equal(
        cycles.length,
        1,
        `${path.relative(root, result.filePath)}: ${JSON.stringify(result.messages)}`,
      );
    }
  });
});
