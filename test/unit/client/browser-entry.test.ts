// The client's browser entry bundles for a browser: nothing it reaches imports node:* or undici (esbuild's
// browser platform refuses Node built-ins, and the metafile lists every module the bundle took in).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const clientDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src/client');

async function bundle(entry: string) {
  return esbuild.build({
    entryPoints: [path.join(clientDir, entry)],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
}

describe('the client browser entry', () => {
  it('bundles for the browser without Node built-ins, undici or the upload store', async () => {
    const { metafile } = await bundle('browser.ts');
    const inputs = Object.keys(metafile.inputs);
    assert.ok(inputs.some((input) => input.endsWith('src/client/api-client.ts')));
    assert.deepEqual(
      inputs.filter((input) =>
        /^node:|node_modules\/(undici|yaml)\/|src\/client\/(uploads|client\.ts)/.test(input),
      ),
      [],
    );
  });

  it('is the only entry that does: the Node entry needs Node', async () => {
    await assert.rejects(bundle('index.ts'), /node:/);
  });
});
