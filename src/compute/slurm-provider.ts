// Runs each managed run as a Slurm batch job, found again by its name (the workflow id): sbatch to start it,
// squeue (then sacct) to watch it, scancel to end it, through a SlurmShell (this host, or a login node by SSH).
import type { LaunchConfig, SlurmJob } from '@assay/contract';
import {
  launchEnv,
  LaunchConfigError,
  providerMismatch,
  ProvisionRefusedError,
  type ComputeProvider,
  type InstanceInfo,
  type ProvisionRequest,
} from './compute-provider.ts';
import type { SlurmConfig } from './slurm-config.ts';
import { buildSlurmSubmit, slurmJobName } from './slurm-job-script.ts';
import { slurmLaunchRefusal } from './slurm-launch-policy.ts';
import { localSlurmShell, type ShellResult, type SlurmShell } from './slurm-shell.ts';
import {
  currentJob,
  instanceState,
  jobIsLive,
  parseSacct,
  parseSqueue,
  SACCT_FORMAT,
  SQUEUE_FORMAT,
  type SlurmJobStatus,
} from './slurm-status.ts';

export type SlurmProviderOptions = {
  config: SlurmConfig;
  /** Default: the commands on this host (a login node). */
  shell?: SlurmShell;
};

/** sbatch's answers that retrying may change: the controller busy, down or slow. */
const TRANSIENT =
  /timed out|temporarily|try again|unable to contact|connection refused|communication|not responding|slurm_persist|resource temporarily/i;

/** sacct on a cluster without accounting (no slurmdbd): it knows nothing, which is not a failed check. */
const NO_ACCOUNTING = /accounting storage is disabled/i;

export class SlurmProvider implements ComputeProvider {
  readonly kind = 'slurm' as const;
  readonly #config: SlurmConfig;
  readonly #shell: SlurmShell;

  constructor(options: SlurmProviderOptions) {
    this.#config = options.config;
    this.#shell = options.shell ?? localSlurmShell();
  }

  /** Every user may submit; the block's job fields must be within the operator's allowlists. */
  checkLaunch(launch: LaunchConfig): void {
    const refusal =
      providerMismatch(launch, 'slurm') ??
      slurmLaunchRefusal(this.#config, launch as Record<string, unknown>)?.message;
    if (refusal) throw new ProvisionRefusedError(refusal);
  }

  async provision(req: ProvisionRequest): Promise<InstanceInfo> {
    this.checkLaunch(req.launch);
    const name = slurmJobName(req.idempotencyKey);
    // A job of any state is the answer: a finished run never starts twice.
    const existing = await this.#find(name);
    if (existing) return info(existing);
    const submit = buildSlurmSubmit({
      config: this.#config,
      name,
      job: (req.launch as { slurm?: SlurmJob }).slurm,
      env: launchEnv(req),
      command: req.launch.command,
    });
    // The script (and its token) goes to sbatch's stdin: never an argv word, which `ps` shows.
    const result = await this.#shell.run(submit.argv, { stdin: submit.script, timeoutMs: 60_000 });
    if (result.code !== 0) {
      const message = `sbatch failed (exit ${result.code}): ${oneLine(result.stderr || result.stdout)}`;
      // A refusal of the job itself (an unknown partition, a limit) is the same on every retry.
      if (TRANSIENT.test(result.stderr) || !/submission failed/i.test(result.stderr))
        throw new Error(message);
      throw new LaunchConfigError(message);
    }
    // `--parsable` answers `<job id>` or `<job id>;<cluster>`.
    const jobId = result.stdout.trim().split(';')[0]!;
    if (!/^\d+$/.test(jobId)) throw new Error(`sbatch answered no job id: ${oneLine(result.stdout)}`);
    return { provider: 'slurm', instanceId: jobId, state: 'pending' };
  }

  async describe(idempotencyKey: string): Promise<InstanceInfo | undefined> {
    const job = await this.#find(slurmJobName(idempotencyKey));
    if (!job) return undefined;
    const current = info(job);
    if (current.state === 'preempted' && jobIsLive(job)) {
      // Requeued, it would start again with a spent token: it is ended here, and the run recovers instead.
      await this.#cancel([job.jobId]);
    }
    return current.state === 'terminated' ? undefined : current;
  }

  async terminate(idempotencyKey: string): Promise<void> {
    const jobs = await this.#squeue(slurmJobName(idempotencyKey));
    const live = jobs.filter(jobIsLive).map((job) => job.jobId);
    if (live.length > 0) await this.#cancel(live);
  }

  /** The run's job: squeue first (it knows live jobs and, for MinJobAge, finished ones), then sacct. */
  async #find(name: string): Promise<SlurmJobStatus | undefined> {
    const queued = currentJob(await this.#squeue(name));
    if (queued) return queued;
    return currentJob(await this.#sacct(name));
  }

  async #squeue(name: string): Promise<SlurmJobStatus[]> {
    const result = await this.#shell.run([
      'squeue',
      '--me',
      '--noheader',
      '--states=all',
      `--name=${name}`,
      '-O',
      SQUEUE_FORMAT,
    ]);
    // A controller that does not answer says nothing of the job: the check failed, which is never "gone".
    if (result.code !== 0) throw failed('squeue', result);
    return parseSqueue(result.stdout);
  }

  async #sacct(name: string): Promise<SlurmJobStatus[]> {
    const result = await this.#shell.run([
      'sacct',
      '-X',
      '-n',
      '-P',
      '-D',
      `--name=${name}`,
      '--starttime=now-60days',
      `--format=${SACCT_FORMAT}`,
    ]);
    if (result.code !== 0) {
      if (NO_ACCOUNTING.test(result.stderr + result.stdout)) return [];
      throw failed('sacct', result);
    }
    return parseSacct(result.stdout);
  }

  async #cancel(jobIds: readonly string[]): Promise<void> {
    const result = await this.#shell.run(['scancel', ...jobIds]);
    // A job that ended meanwhile is what scancel wants; anything else may leave the job running.
    if (result.code !== 0 && !/invalid job id|already completing or completed/i.test(result.stderr))
      throw failed('scancel', result);
  }
}

function info(job: SlurmJobStatus): InstanceInfo {
  return { provider: 'slurm', instanceId: job.jobId, state: instanceState(job) };
}

function failed(command: string, result: ShellResult): Error {
  return new Error(`${command} failed (exit ${result.code}): ${oneLine(result.stderr || result.stdout)}`);
}

function oneLine(text: string): string {
  return text.trim().replace(/\s+/g, ' ').slice(0, 500);
}
