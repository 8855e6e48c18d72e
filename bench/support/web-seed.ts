// Data for the web UI's render benchmark, created through the real
// API with a bounded number of calls in flight.
import { Agent, request } from 'undici';

export interface SeedApi {
  url: string;
  key: string;
  dispatcher: Agent;
}

/** One API call; throws on any non-2xx with the server's answer. */
export async function call<T>(
  api: SeedApi,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await request(`${api.url}${path}`, {
    method,
    dispatcher: api.dispatcher,
    headers: {
      authorization: `Bearer ${api.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode > 299)
    throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as T;
}

/** Runs `task(0…count-1)` with at most `concurrency` in flight. */
export async function bounded(count: number, concurrency: number, task: (i: number) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/**
 * `experiments` draft experiments in the key's personal scope, then one committed experiment (created last,
 * so newest) with two variations and `runs` pending runs split between them; answers the committed one's id.
 */
export async function seedScope(
  api: SeedApi,
  o: { experiments: number; runs: number; concurrency: number },
): Promise<string> {
  await bounded(o.experiments - 1, o.concurrency, (i) =>
    call(api, 'POST', '/experiments', {
      name: `Learning-rate study ${i + 1}`,
      hypothesis: `Warmup of ${(i % 20) * 100} steps lowers the final loss`,
    }),
  );
  const { id } = await call<{ id: string }>(api, 'POST', '/experiments', {
    name: 'Run table study',
    hypothesis: 'Many runs render quickly',
  });
  for (const lr of [0.1, 0.01])
    await call(api, 'POST', `/experiments/${id}/variations`, { config_yaml: `lr: ${lr}\n` });
  await call(api, 'POST', `/experiments/${id}/commit`);
  await bounded(o.runs, o.concurrency, (i) =>
    call(api, 'POST', `/experiments/${id}/variations/${(i % 2) + 1}/runs`),
  );
  return id;
}

/** A second user (created by the admin) whose personal scope holds the baseline data; answers their key. */
export async function createUser(api: SeedApi, email: string): Promise<string> {
  const created = await call<{ api_key: { key: string } }>(api, 'POST', '/admin/users', { email });
  return created.api_key.key;
}

const METRIC_BATCH = 1000; // MAX_METRIC_POINTS_PER_REQUEST
const METRIC_VARIATIONS = 10;

/** The k-th logged key of `seedMetricExperiment`: metric_00, metric_01, … */
export const metricKeyName = (k: number) => `metric_${String(k).padStart(2, '0')}`;

/** The value seeded at a step: a decaying curve with noise, different per run and key. */
export const seededValue = (run: number, key: number, step: number) =>
  (1 + key) * Math.exp(-step / (2000 + 37 * run)) + 0.05 * Math.sin(step * (run + 1));

/**
 * An experiment of 10 variations (lr and warmup differ) and `runs` runs spread over them, each started, given
 * `keys` × `steps` points in batches of 1,000 (the batches of all runs `concurrency` at a time), and
 * succeeded.
 */
export async function seedMetricExperiment(
  api: SeedApi,
  o: { runs: number; keys: number; steps: number; concurrency: number },
): Promise<{ id: string; points: number }> {
  const { id } = await call<{ id: string }>(api, 'POST', '/experiments', {
    name: `Metrics with ${o.runs} runs`,
  });
  for (let v = 0; v < METRIC_VARIATIONS; v++)
    await call(api, 'POST', `/experiments/${id}/variations`, {
      config_yaml: `lr: ${10 ** -(1 + (v % 5))}\nwarmup: ${100 * Math.floor(v / 5)}\n`,
    });
  await call(api, 'POST', `/experiments/${id}/commit`);
  const addresses: string[] = [];
  await bounded(o.runs, o.concurrency, async (i) => {
    const n = (i % METRIC_VARIATIONS) + 1;
    const run = await call<{ r: number }>(api, 'POST', `/experiments/${id}/variations/${n}/runs`);
    const path = `/experiments/${id}/variations/${n}/runs/${run.r}`;
    await call(api, 'GET', `${path}/config`);
    await call(api, 'POST', `${path}/start`, { environment: {} });
    addresses[i] = path;
  });
  const batchesPerKey = Math.ceil(o.steps / METRIC_BATCH);
  await bounded(o.runs * o.keys * batchesPerKey, o.concurrency, (b) => {
    const run = Math.floor(b / (o.keys * batchesPerKey));
    const key = Math.floor(b / batchesPerKey) % o.keys;
    const from = (b % batchesPerKey) * METRIC_BATCH;
    const metrics = [];
    for (let step = from; step < Math.min(o.steps, from + METRIC_BATCH); step++)
      metrics.push({ key: metricKeyName(key), step, value: seededValue(run, key, step) });
    return call(api, 'POST', `${addresses[run]}/metrics`, { metrics });
  });
  await bounded(o.runs, o.concurrency, (i) => call(api, 'POST', `${addresses[i]}/succeed`));
  return { id, points: o.runs * o.keys * o.steps };
}
