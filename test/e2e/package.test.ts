import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from '../support/assay-server.ts';
import { startTestService, type TestService } from '../support/service.ts';

const run = promisify(execFile);

/** The library as another project uses it: built JavaScript and declarations, imported by package name. */
describe('the published client library', () => {
  let t: TestService;
  let consumer: string;
  before(async () => {
    t = await startTestService({ listen: true });
    await run('npm', ['run', 'build'], { cwd: repoRoot });
    consumer = await mkdtemp(path.join(tmpdir(), 'assay-consumer-'));
    await mkdir(path.join(consumer, 'node_modules'));
    await symlink(repoRoot, path.join(consumer, 'node_modules', 'assay'));
    await writeFile(path.join(consumer, 'package.json'), '{ "type": "module" }\n');
  });
  after(async () => {
    await t.close();
    await rm(consumer, { recursive: true, force: true });
  });

  it('typechecks in a strict TypeScript project', async () => {
    await writeFile(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2023',
          strict: true,
          noEmit: true,
        },
      }),
    );
    await writeFile(
      path.join(consumer, 'main.ts'),
      "import { Client, NotFoundError, PERSONAL, type ExperimentData } from 'assay';\n" +
        "const client: Client = new Client({ serverUrl: 'http://127.0.0.1:8080', apiKey: 'k' });\n" +
        'const made: Promise<ExperimentData> = client.experiments.create({ name: "x", organizationId: PERSONAL });\n' +
        'export { made, NotFoundError };\n',
    );
    await run(path.join(repoRoot, 'node_modules/.bin/tsc'), ['-p', consumer]);
  });

  it('runs from plain JavaScript against the real service', async () => {
    await writeFile(
      path.join(consumer, 'main.mjs'),
      "import { Client } from 'assay';\n" +
        'const client = new Client({ serverUrl: process.env.URL, apiKey: process.env.KEY });\n' +
        "const e = await client.experiments.create({ name: 'from a package' });\n" +
        'console.log(JSON.stringify({ id: e.id, state: e.state }));\n',
    );
    const { stdout } = await run(process.execPath, [path.join(consumer, 'main.mjs')], {
      env: { ...process.env, URL: t.url!, KEY: t.adminKey, HOME: consumer },
    });
    const made = JSON.parse(stdout);
    assert.equal(made.state, 'draft');
    assert.equal((await t.as(t.adminKey).get(`/experiments/${made.id}`)).body.name, 'from a package');
  });
});
