import assert from 'node:assert/strict';
import type { Api } from './service.ts';

/** Small helpers that go through the public API, asserting each step so a failing fixture says where. */
export async function createExperiment(api: Api, key: string, body: Record<string, unknown> = {}) {
  const res = await api.as(key).post('/experiments', { name: 'an experiment', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { id: string; state: string; organization_id: string | null };
}

export async function addVariation(api: Api, key: string, experimentId: string, configYaml = 'lr: 0.1\n') {
  const res = await api.as(key).post(`/experiments/${experimentId}/variations`, { config_yaml: configYaml });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body as { n: number };
}

/** A committed experiment with one variation (of `configYaml` when given): ready for runs. */
export async function committedExperiment(
  api: Api,
  key: string,
  body: Record<string, unknown> = {},
  configYaml?: string,
) {
  const experiment = await createExperiment(api, key, body);
  await addVariation(api, key, experiment.id, configYaml);
  const res = await api.as(key).post(`/experiments/${experiment.id}/commit`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { id: string };
}

export async function createRun(api: Api, key: string, experimentId: string, n = 1) {
  const res = await api.as(key).post(`/experiments/${experimentId}/variations/${n}/runs`);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return {
    ...(res.body as { id: string; r: number }),
    path: `/experiments/${experimentId}/variations/${n}/runs/${res.body.r}`,
  };
}

/** A run that read its config and started: heartbeats, succeed and fail apply to it. */
export async function runningRun(api: Api, key: string, experimentId: string, n = 1) {
  const run = await createRun(api, key, experimentId, n);
  assert.equal((await api.as(key).get(`${run.path}/config`)).status, 200);
  const started = await api.as(key).post(`${run.path}/start`, { environment: { os: 'test' } });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  return run;
}
