import type { RunState } from '@assay/contract';
import type pg from 'pg';
import { NetworkError, sleep, type LoadClient } from './load-client.ts';

/**
 * One write the service acknowledged with a 2xx, with what it wrote: the database must hold it afterwards.
 */
export type Ack =
  | { kind: 'experiment'; id: string; name: string }
  | { kind: 'variation'; experimentId: string; n: number; configYaml: string }
  | { kind: 'commit'; experimentId: string }
  | { kind: 'run'; experimentId: string; n: number; r: number; state: RunState; configRead: boolean };
type RunAck = Extract<Ack, { kind: 'run' }>;

export interface WriteLog {
  acks: Ack[];
  /** Requests that got no answer, with when they were sent (only an outage may explain them). */
  networkErrors: NetworkError[];
  /** Answers other than 2xx: a healthy service (even one just restarted) gives none to these writers. */
  refusals: string[];
}

/**
 * A writer: chains of create experiment → variation → commit → runs read, started, succeeded or failed,
 * logging every acknowledged write. A failed call ends the chain (never retried, so no write is ambiguous);
 * the next chain starts 200 ms later, so the writer keeps trying through an outage.
 */
export async function runWriter(
  client: LoadClient,
  log: WriteLog,
  name: string,
  stopped: () => boolean,
): Promise<void> {
  const must = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    let answer;
    try {
      answer = await client.call(method, path, body);
    } catch (error) {
      if (error instanceof NetworkError) log.networkErrors.push(error);
      throw error;
    }
    if (answer.status >= 300) {
      log.refusals.push(`${method} ${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
      throw new Error('refused');
    }
    return answer.body;
  };
  for (let chain = 1; !stopped(); chain++) {
    try {
      const experiment = await must('POST', '/experiments', { name: `${name}-${chain}` });
      log.acks.push({ kind: 'experiment', id: experiment.id, name: experiment.name });
      const configYaml = `seed: ${chain}\nwriter: ${name}\n`;
      const variation = await must('POST', `/experiments/${experiment.id}/variations`, {
        config_yaml: configYaml,
      });
      log.acks.push({ kind: 'variation', experimentId: experiment.id, n: variation.n, configYaml });
      await must('POST', `/experiments/${experiment.id}/commit`);
      log.acks.push({ kind: 'commit', experimentId: experiment.id });
      for (let i = 0; i < 3 && !stopped(); i++) {
        const base = `/experiments/${experiment.id}/variations/${variation.n}/runs`;
        const run = await must('POST', base);
        const ack: RunAck = {
          kind: 'run',
          experimentId: experiment.id,
          n: variation.n,
          r: run.r,
          state: 'pending',
          configRead: false,
        };
        // Each acknowledged move is logged as a snapshot of everything acknowledged about the run so far.
        const record = (change: Partial<RunAck>) => {
          Object.assign(ack, change);
          log.acks.push({ ...ack });
        };
        record({});
        await must('GET', `${base}/${run.r}/config`);
        record({ configRead: true });
        await must('POST', `${base}/${run.r}/start`, { environment: { os: 'linux' } });
        record({ state: 'running' });
        if (i % 2 === 0) await must('POST', `${base}/${run.r}/succeed`);
        else
          await must('POST', `${base}/${run.r}/fail`, {
            reason: 'crash',
            message: 'a writer failing on purpose',
          });
        record({ state: i % 2 === 0 ? 'succeeded' : 'failed' });
      }
    } catch {
      await sleep(200);
    }
  }
}

const RANK: Record<RunState, number> = { pending: 0, running: 1, succeeded: 2, failed: 2 };

/**
 * Checks every acknowledged write against the database; returns what was checked and what is missing
 * or wrong.
 */
export async function checkAcknowledged(
  db: pg.Client,
  acks: readonly Ack[],
): Promise<{ checked: Record<string, number>; problems: string[] }> {
  const problems: string[] = [];
  const experimentIds = [...new Set(acks.flatMap((a) => (a.kind === 'experiment' ? [a.id] : [])))];
  const experiments = new Map(
    (await db.query('SELECT id, name, state FROM experiments WHERE id = ANY($1)', [experimentIds])).rows.map(
      (row) => [row.id, row],
    ),
  );
  const variations = new Map(
    (
      await db.query('SELECT experiment_id, n, config_yaml FROM variations WHERE experiment_id = ANY($1)', [
        experimentIds,
      ])
    ).rows.map((row) => [`${row.experiment_id}/${row.n}`, row]),
  );
  const runs = new Map(
    (
      await db.query(
        'SELECT experiment_id, n, r, state, config_read_at FROM runs WHERE experiment_id = ANY($1)',
        [experimentIds],
      )
    ).rows.map((row) => [`${row.experiment_id}/${row.n}/${row.r}`, row]),
  );
  // The newest acknowledged state of each run is the one to hold (a later move may have gone unanswered).
  const latestRuns = new Map<string, RunAck>();
  const checked = { experiments: 0, variations: 0, commits: 0, runs: 0, 'run moves': 0 };
  for (const ack of acks) {
    if (ack.kind === 'experiment') {
      checked.experiments++;
      const row = experiments.get(ack.id);
      if (row?.name !== ack.name)
        problems.push(`experiment ${ack.id} (${ack.name}): ${row ? `named ${row.name}` : 'missing'}`);
    } else if (ack.kind === 'variation') {
      checked.variations++;
      if (variations.get(`${ack.experimentId}/${ack.n}`)?.config_yaml !== ack.configYaml)
        problems.push(`variation ${ack.experimentId}/${ack.n}: missing or different`);
    } else if (ack.kind === 'commit') {
      checked.commits++;
      if (experiments.get(ack.experimentId)?.state !== 'committed')
        problems.push(
          `experiment ${ack.experimentId}: commit acknowledged, state ${experiments.get(ack.experimentId)?.state}`,
        );
    } else {
      checked['run moves']++;
      latestRuns.set(`${ack.experimentId}/${ack.n}/${ack.r}`, ack);
    }
  }
  for (const [key, ack] of latestRuns) {
    checked.runs++;
    const row = runs.get(key);
    if (!row) problems.push(`run ${key}: missing (acknowledged ${ack.state})`);
    else if (ack.configRead && !row.config_read_at)
      problems.push(`run ${key}: config read acknowledged, config_read_at empty`);
    else if (RANK[ack.state] === 2 ? row.state !== ack.state : RANK[row.state as RunState] < RANK[ack.state])
      problems.push(`run ${key}: acknowledged ${ack.state}, database says ${row.state}`);
  }
  return { checked, problems };
}
