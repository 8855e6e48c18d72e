// A cancel reaches `assay run`'s command through the control long-poll, not at the next heartbeat (30 s
// here, longer than the command runs): SIGTERM to its group, SIGKILL after the grace, the run failed
// `abandoned`, never succeeded.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '../../src/client/index.ts';
import { spawnCli, tempHome, waitFor, repoRoot } from '../support/cli.ts';
import { committedExperiment } from '../support/fixtures.ts';
import { startRecordingProxy } from '../support/recording-proxy.ts';
import { startTestService, type TestService } from '../support/service.ts';

const SLEEPER = path.join(repoRoot, 'test/cli/fixtures/sleeper.sh');
/** How long the sleeper runs when nothing stops it. */
const OWN_END_MS = 20_000;

const read = (file: string) => readFile(file, 'utf8').catch(() => undefined);

describe('assay run: a cancel reaches the command through the control long-poll', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let experimentId: string;
  let client: Client;

  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    experimentId = (await committedExperiment(t, key)).id;
    client = new Client({ serverUrl: t.url, apiKey: key, uploadStorePath: path.join(home, 'uploads.db') });
  });
  after(async () => {
    client.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  /** Starts the sleeper under `assay run` (heartbeats every 30 s), cancels it once it runs, and waits. */
  async function cancelSleeper(
    name: string,
    args: string[],
    env: Record<string, string> = {},
    heartbeatS = 30,
  ) {
    const dir = path.join(home, name);
    mkdirSync(dir, { recursive: true });
    const { result } = spawnCli(
      [
        'run',
        '--experiment',
        experimentId,
        '--variation',
        '1',
        '--heartbeat-interval',
        String(heartbeatS),
        '--outputs',
        path.join(dir, 'outputs'),
        '--',
        'bash',
        SLEEPER,
        dir,
        ...args,
      ],
      { home, cwd: dir, env: { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: key, ...env } },
    );
    await waitFor('the command to start', () => read(path.join(dir, 'started')));
    const started = Date.now();
    const r = (await client.runs.list(experimentId, 1)).find((x) => x.state === 'running')!.r;
    await client.runs.cancel(experimentId, 1, r);
    const done = await result;
    return {
      done,
      endedAfterMs: Date.now() - started,
      run: await client.runs.get(experimentId, 1, r),
      term: await read(path.join(dir, 'term')),
      ownEnd: await read(path.join(dir, 'done')),
    };
  }

  it('a command that traps SIGTERM gets it well before its own end, and the run fails abandoned', async () => {
    const { done, endedAfterMs, run, term, ownEnd } = await cancelSleeper('traps', []);
    assert.equal(term, 'stopped\n', `the command got no SIGTERM: ${done.stderr}`);
    assert.equal(ownEnd, undefined, 'the command ran to its own end');
    assert.ok(endedAfterMs < OWN_END_MS, `assay run ended ${endedAfterMs} ms after the start`);
    assert.match(done.stderr, /the run was cancelled; stopping the command \(SIGTERM, SIGKILL after 30 s\)/);
    assert.equal(done.code, 143, done.stderr);
    assert.equal(run.state, 'failed');
    assert.equal(run.failure_reason, 'abandoned');
    assert.equal(run.cancel_reason, 'cancelled');
    assert.equal(run.failure_message, 'cancelled; command: exit code 143');
  });

  it('a command that ignores SIGTERM is killed after the grace (ASSAY_RUN_GRACE_S)', async () => {
    const { done, endedAfterMs, run, term, ownEnd } = await cancelSleeper('ignores', ['ignore'], {
      ASSAY_RUN_GRACE_S: '1',
    });
    assert.equal(term, 'ignored\n', `the command got no SIGTERM: ${done.stderr}`);
    assert.equal(ownEnd, undefined, 'the command ran to its own end');
    assert.ok(endedAfterMs < OWN_END_MS, `assay run ended ${endedAfterMs} ms after the start`);
    assert.match(done.stderr, /SIGKILL after 1 s/);
    assert.equal(done.code, 137, done.stderr);
    assert.equal(run.state, 'failed');
    assert.equal(run.failure_reason, 'abandoned');
    assert.equal(run.failure_message, 'cancelled; command: killed by SIGKILL');
  });

  it('the heartbeat stays the fallback: with every control poll cut off, the next heartbeat stops the command', async () => {
    const proxy = await startRecordingProxy(t.url!, {
      intercept: (req) => (req.url?.includes('/control') ? 'reset' : undefined),
    });
    try {
      const { done, run, term } = await cancelSleeper('fallback', [], { SERVICE_SERVER_URL: proxy.url }, 1);
      assert.ok(
        proxy.requests.some((line) => line.includes('/control') && line.endsWith('(reset)')),
        'the runner polled',
      );
      assert.match(done.stderr, /control poll failed \(trying again\)/);
      assert.equal(term, 'stopped\n', `the command got no SIGTERM: ${done.stderr}`);
      assert.equal(run.state, 'failed');
      assert.equal(run.failure_reason, 'abandoned');
    } finally {
      await proxy.close();
    }
  });
});
