// `assay run` keeps trying its final move through a service outage: a finished run is never left running.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { runCli, tempHome } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startRecordingProxy } from '../support/recording-proxy.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** The shared proxy, where the first `failures` succeed calls answer 503 as a restarting service would. */
async function flakySucceedProxy(target: string, failures: number) {
  let refused = 0;
  const proxy = await startRecordingProxy(target, {
    intercept: (req) => (req.url?.endsWith('/succeed') && refused++ < failures ? '503' : undefined),
  });
  return { ...proxy, refused: () => Math.min(refused, failures) };
}

describe('assay run through a service outage at the end', () => {
  let t: TestService;
  let home: string;
  before(async () => {
    t = await startTestService({ listen: true });
    home = await tempHome();
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('tries succeed again after 503s and the run ends succeeded, exit code 0', async () => {
    const { key } = await t.createUser();
    const experimentId = (await committedExperiment(t, key)).id;
    const run = await createRun(t, key, experimentId);
    const proxy = await flakySucceedProxy(t.url!, 2);
    try {
      const result = await runCli(
        ['run', '--experiment', experimentId, '--variation', '1', '--run', String(run.r), '--', 'true'],
        {
          home,
          env: { SERVICE_SERVER_URL: proxy.url, SERVICE_API_KEY: key },
        },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(proxy.refused(), 2);
      assert.match(result.stderr, /trying again/);
      assert.equal((await t.as(key).get(run.path)).body.state, 'succeeded');
    } finally {
      await proxy.close();
    }
  });
});
