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
