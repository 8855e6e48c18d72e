// @assay/client as another project installs it: the two tarballs scripts/build-packages.ts packs, installed
// into an empty project with npm, and nothing of the service's dependencies coming along.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { buildPackages } from '../../scripts/build-packages.ts';
import { repoRoot } from '../support/assay-server.ts';
import { startTestService, type TestService } from '../support/service.ts';

const run = promisify(execFile);

/** What only the service needs; none of it may reach a project that installs the client. */
const SERVICE_ONLY = ['fastify', 'pg', '@electric-sql/pglite', '@temporalio', '@aws-sdk'];

describe('the published client package', () => {
  let t: TestService;
  let consumer: string;
  before(async () => {
    t = await startTestService({ listen: true });
    const tarballs = buildPackages({ pack: true });
    consumer = await mkdtemp(path.join(tmpdir(), 'assay-consumer-'));
    await writeFile(
      path.join(consumer, 'package.json'),
      '{ "name": "consumer", "private": true, "type": "module" }\n',
    );
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], {
      cwd: consumer,
    });
  });
  after(async () => {
    await t.close();
    await rm(consumer, { recursive: true, force: true });
  });

  it('installs without any of the service dependencies', async () => {
    for (const name of SERVICE_ONLY) {
      assert.ok(
        !existsSync(path.join(consumer, 'node_modules', name)),
        `${name} was installed with the client`,
      );
    }
    const { stdout } = await run('du', ['-sk', path.join(consumer, 'node_modules')]);
    console.log(`installed size of @assay/client with its dependencies: ${stdout.split('\t')[0]} KiB`);
  });

  it('runs from plain JavaScript against the real service', async () => {
    await writeFile(
      path.join(consumer, 'main.mjs'),
      "import { Client } from '@assay/client';\n" +
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
        files: ['main.ts'],
      }),
    );
    await writeFile(
      path.join(consumer, 'main.ts'),
      "import { Client, NotFoundError, PERSONAL, type ExperimentData } from '@assay/client';\n" +
        "const client: Client = new Client({ serverUrl: 'http://127.0.0.1:8080', apiKey: 'k' });\n" +
        'const made: Promise<ExperimentData> = client.experiments.create({ name: "x", organizationId: PERSONAL });\n' +
        'export { made, NotFoundError };\n',
    );
    await run(path.join(repoRoot, 'node_modules/.bin/tsc'), ['-p', consumer]);
  });

  it('gives a bundler for the browser the entry without Node modules', async () => {
    const result = await esbuild.build({
      stdin: { contents: "export { ApiClient } from '@assay/client';", resolveDir: consumer, loader: 'js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(
      inputs.some((input) => input.endsWith('@assay/client/browser.js')),
      inputs.join('\n'),
    );
    assert.deepEqual(
      inputs.filter((input) => /node_modules\/(undici|yaml)\/|@assay\/client\/index\.js/.test(input)),
      [],
    );
  });
});
