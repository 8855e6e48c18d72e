// Two deployments on one machine, each as `npm start` runs it (embedded Temporal on the same default port, its
// own data dir): neither takes the other's work.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { takeBootstrapKey } from '../support/assay-server.ts';
import { freePorts } from '../support/free-port.ts';
import { httpApi } from '../support/http-api.ts';
import { startLoggedAssayServer, type LoggedAssayServer } from '../support/logged-assay-server.ts';

const RUNS = 5;

interface Deployment {
  name: string;
  server: LoggedAssayServer;
  key: string;
  /** The file every run's command appends its run number to. */
  lines: string;
}

describe('two deployments on one machine', () => {
  const dirs: string[] = [];
  const deployments: Deployment[] = [];
  let temporalPort: number;

  before(async () => {
    // Stands for the defaults 7233/8233, which both services are given, as two `npm start`s would be.
    const [port, uiPort] = await freePorts(2);
    temporalPort = port!;
    for (const name of ['first', 'second']) {
      const dir = await mkdtemp(path.join(tmpdir(), `assay-two-${name}-`));
      dirs.push(dir);
      const env = {
        ASSAY_DATA_DIR: path.join(dir, 'data'),
        ASSAY_TEMPORAL_PORT: String(port),
        ASSAY_TEMPORAL_UI_PORT: String(uiPort),
      };
      const server = await startLoggedAssayServer(env, dir);
      const key = await takeBootstrapKey(env);
      assert.ok(key, `${name}: a bootstrap admin key`);
      deployments.push({ name, server, key, lines: path.join(dir, 'ran.txt') });
    }
  });

  after(async () => {
    for (const d of deployments) await d.server.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('the second does not join the first one’s Temporal: it starts its own on a free port and says so', async () => {
    const log = await deployments[1]!.server.stdout();
    assert.match(log, new RegExp(`port ${temporalPort} is taken by a Temporal this data dir did not start`));
    assert.match(log, /"reused":false/);
  });

  it('each provisions 5 managed runs at once: all 10 succeed, each in its own service, each command ran once', async () => {
    const provisioned = await Promise.all(deployments.map(provisionFive));
    await Promise.all(
      deployments.map(async (d, i) => {
        for (const run of provisioned[i]!) {
          const ended = await waitForEnd(d, run, 180_000);
          assert.equal(ended.state, 'succeeded', `${d.name} run ${run}: ${JSON.stringify(ended)}`);
        }
      }),
    );
    for (const d of deployments) {
      const ran = (await readFile(d.lines, 'utf8')).trim().split('\n').sort();
      assert.deepEqual(ran, ['1', '2', '3', '4', '5'], `${d.name}: each of its commands ran once`);
    }
  });
});

/** An experiment whose variation appends its run number to the deployment's file; 5 runs provisioned at once. */
async function provisionFive(d: Deployment): Promise<string[]> {
  const api = httpApi(d.server.url).as(d.key);
  const experiment = await api.post('/experiments', { name: `two-${d.name}`, organization_id: 'personal' });
  assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
  const base = `/experiments/${experiment.body.id}`;
  const launch = { command: `echo "$ASSAY_RUN" >> ${d.lines}` };
  const variation = await api.post(`${base}/variations`, { config_yaml: stringify({ lr: 0.1, launch }) });
  assert.equal(variation.status, 201, JSON.stringify(variation.body));
  assert.equal((await api.post(`${base}/commit`)).status, 200);
  const paths: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const run = await api.post(`${base}/variations/${variation.body.n}/runs`);
    assert.equal(run.status, 201, JSON.stringify(run.body));
    paths.push(`${base}/variations/${variation.body.n}/runs/${run.body.r}`);
  }
  const answers = await Promise.all(paths.map((p) => api.post(`${p}/provision`)));
  for (const answer of answers) assert.equal(answer.status, 202, JSON.stringify(answer.body));
  return paths;
}

async function waitForEnd(d: Deployment, runPath: string, timeoutMs: number) {
  const api = httpApi(d.server.url).as(d.key);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = (await api.get(runPath)).body;
    if (run.state === 'succeeded' || run.state === 'failed') return run;
    assert.ok(Date.now() < deadline, `${d.name} ${runPath} still ${run.state} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
