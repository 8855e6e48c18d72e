import { inBatches, NetworkError, sleep, type Answer, type LoadClient } from './load-client.ts';

/** A committed experiment with one variation and `count` pending runs of it, all made through the API. */
export async function pendingRuns(
  client: LoadClient,
  count: number,
  name = 'load',
): Promise<{ experimentId: string; paths: string[] }> {
  const must = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const answer = await client.call(method, path, body);
    if (answer.status >= 300)
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const experiment = await must('POST', '/experiments', { name, hypothesis: 'the service holds under load' });
  await must('POST', `/experiments/${experiment.id}/variations`, {
    config_yaml: 'lr: 3.0e-4\nlaunch:\n  command: python train.py\n',
  });
  await must('POST', `/experiments/${experiment.id}/commit`);
  const runs = await inBatches(Array.from({ length: count }), 32, () =>
    must('POST', `/experiments/${experiment.id}/variations/1/runs`),
  );
  return {
    experimentId: experiment.id,
    paths: runs.map((run) => `/experiments/${experiment.id}/variations/1/runs/${run.r}`),
  };
}

/** What the runner does after each heartbeat: go on, end the run, or fall silent as a runner that died. */
export type RunnerStep = 'beat' | 'succeed' | 'vanish';

export interface RunnerOptions {
  /** Mean spacing of heartbeats; each one is jittered by ±20%. */
  heartbeatMs: number;
  next: () => RunnerStep;
  /** Retry through network errors and 503s until this time (epoch ms); without it a failed call is final. */
  retryUntil?: () => number | undefined;
  /** Wait before reading the config, so a thousand runners do not start in the same millisecond. */
  startDelayMs?: number;
  onHeartbeat?: (answer: Answer) => void;
}

export interface RunnerReport {
  path: string;
  heartbeats: number;
  /**
   * `last_heartbeat_at` of the newest acknowledged heartbeat (or start): the database must hold at
   * least this.
   */
  lastAckedHeartbeatAt: string | undefined;
  /** How the runner ended: its succeed acknowledged, silent on purpose, or a call that failed for good. */
  end: 'succeeded' | 'vanished' | 'failed';
  /** Calls retried through an outage. */
  retries: number;
  /** Calls that failed for good: non-2xx answers and network errors, with what they were. */
  errors: string[];
}

/**
 * One simulated runner: reads its config, starts, heartbeats (jittered) while told to, then succeeds
 * or vanishes.
 */
export async function simulateRunner(
  client: LoadClient,
  path: string,
  o: RunnerOptions,
): Promise<RunnerReport> {
  const report: RunnerReport = {
    path,
    heartbeats: 0,
    lastAckedHeartbeatAt: undefined,
    end: 'failed',
    retries: 0,
    errors: [],
  };
  const vanished = () => o.next() === 'vanish';
  // An answer, or undefined once the call failed for good (recorded) or the runner vanished mid-retry.
  const call = async (
    method: 'GET' | 'POST',
    suffix: string,
    body?: unknown,
  ): Promise<Answer | undefined> => {
    for (;;) {
      let failure: string;
      try {
        const answer = await client.call(method, `${path}${suffix}`, body);
        if (answer.status < 300) return answer;
        failure = `${method} …${suffix} → ${answer.status} ${answer.body?.error?.code ?? ''}`;
        if (answer.status !== 503) return void report.errors.push(failure);
      } catch (error) {
        if (!(error instanceof NetworkError)) throw error;
        failure = error.message;
      }
      const until = o.retryUntil?.();
      if (until === undefined || Date.now() >= until) return void report.errors.push(failure);
      if (vanished()) return undefined;
      report.retries++;
      await sleep(200);
    }
  };
  await sleep(o.startDelayMs ?? 0);
  if (!(await call('GET', '/config'))) return report;
  const started = await call('POST', '/start', { environment: { os: 'linux', runner: 'simulated' } });
  if (!started) return report;
  report.lastAckedHeartbeatAt = started.body.last_heartbeat_at;
  while (o.next() === 'beat') {
    await sleep(o.heartbeatMs * (0.8 + 0.4 * Math.random()));
    if (vanished()) break;
    const beat = await call('POST', '/heartbeat');
    if (!beat) return vanished() ? { ...report, end: 'vanished' } : report;
    report.heartbeats++;
    report.lastAckedHeartbeatAt = beat.body.last_heartbeat_at;
    o.onHeartbeat?.(beat);
  }
  if (vanished()) return { ...report, end: 'vanished' };
  if (await call('POST', '/succeed')) report.end = 'succeeded';
  return report;
}
