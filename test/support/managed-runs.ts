// Steps of managed-run scenarios, through the public API (HTTP and Temporal's client), asserting as they go.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import type { ManagedRunResult } from '../../workflows/saga-types.ts';
import type { Orchestration } from './orchestration.ts';

export interface PendingRun {
  id: string;
  experimentId: string;
  n: number;
  r: number;
}

export function managedRunWorld(world: Orchestration) {
  let user: { id: string; key: string } | undefined;
  const svc = () => world.svc;
  const key = () => user!.key;
  const runPath = (run: { experimentId: string; n: number; r: number }) =>
    `/experiments/${run.experimentId}/variations/${run.n}/runs/${run.r}`;

  async function ensureUser() {
    user ??= await world.svc.createUser();
    return user;
  }

  return {
    svc,
    key,
    runPath,
    /** The scenario's researcher (created on first use). */
    user: ensureUser,

    /**
     * A committed experiment with one variation whose launch command is `command` (none when undefined), and
     * a pending run.
     */
    async pendingRun(
      command: string | string[] | undefined,
      env?: Record<string, string>,
    ): Promise<PendingRun> {
      const { key } = await ensureUser();
      const api = world.svc.as(key);
      const experiment = await api.post('/experiments', { name: 'managed', organization_id: 'personal' });
      assert.equal(experiment.status, 201, JSON.stringify(experiment.body));
      const launch = command === undefined ? undefined : { command, ...(env ? { env } : {}) };
      const variation = await api.post(`/experiments/${experiment.body.id}/variations`, {
        config_yaml: stringify({ lr: 0.1, ...(launch ? { launch } : {}) }),
      });
      assert.equal(variation.status, 201, JSON.stringify(variation.body));
      assert.equal((await api.post(`/experiments/${experiment.body.id}/commit`)).status, 200);
      const run = await api.post(`/experiments/${experiment.body.id}/variations/${variation.body.n}/runs`);
      assert.equal(run.status, 201, JSON.stringify(run.body));
      return { id: run.body.id, experimentId: experiment.body.id, n: variation.body.n, r: run.body.r };
    },

    provision(run: PendingRun) {
      return world.svc.as(key()).post(`${runPath(run)}/provision`);
    },

    async getRun(run: { experimentId: string; n: number; r: number }) {
      const res = await world.svc.as(key()).get(runPath(run));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    },

    async waitForState(run: PendingRun, state: string, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = (await world.svc.as(key()).get(runPath(run))).body;
        if (current.state === state) return current;
        assert.ok(
          Date.now() < deadline,
          `run ${run.r} still ${current.state} after ${timeoutMs} ms, waiting for ${state}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },

    result(workflowId: string): Promise<ManagedRunResult> {
      return world.env.client.workflow.getHandle(workflowId).result();
    },

    /** The run's worker keys as its owner sees them: how many were minted, how many are revoked. */
    async workerKeys(run: PendingRun) {
      const keys = (await world.svc.as(key()).get('/api-keys')).body.items.filter(
        (k: any) => k.run_id === run.id,
      );
      return { total: keys.length, revoked: keys.filter((k: any) => k.revoked_at !== null).length };
    },

    /** Instances the local provider holds for this workflow id (it never holds two for one key). */
    async instancesOf(workflowId: string): Promise<number> {
      const state = JSON.parse(
        await readFile(path.join(world.stateDir, 'local-instances.json'), 'utf8').catch(() => '{}'),
      );
      return Object.keys(state).filter((k) => k === workflowId).length;
    },

    /** SIGSTOP the instance's process group: alive, but its heartbeats stop. */
    async freezeInstance(workflowId: string) {
      const info = await world.provider.describe(workflowId);
      assert.ok(info, 'instance running');
      process.kill(-Number(info.instanceId.replace(/^pid-/, '')), 'SIGSTOP');
    },

    /** SIGKILL the instance's process group: a lost machine. */
    async killInstance(workflowId: string) {
      const info = await world.provider.describe(workflowId);
      assert.ok(info, 'instance running');
      process.kill(-Number(info.instanceId.replace(/^pid-/, '')), 'SIGKILL');
    },

    /** Every instance the provider ever started has ended. */
    async assertNoInstanceLeft() {
      const state = JSON.parse(
        await readFile(path.join(world.stateDir, 'local-instances.json'), 'utf8').catch(() => '{}'),
      );
      const alive = [];
      for (const workflowId of Object.keys(state))
        if (await world.provider.describe(workflowId)) alive.push(workflowId);
      for (const workflowId of alive) await world.provider.terminate(workflowId);
      assert.deepEqual(alive, [], 'instances left running');
    },
  };
}
