// What squeue and sacct say of a run's job, and what that means for the saga: live, gone, or taken back.
import type { InstanceState } from './compute-provider.ts';

export type SlurmJobStatus = {
  jobId: string;
  /** Slurm's job state, upper case (RUNNING, COMPLETED, CANCELLED…), without sacct's ` by <uid>` tail. */
  state: string;
  /** Times Slurm requeued the job; sacct's duplicates count a REQUEUED record instead. */
  restarts: number;
};

/** squeue's fields, in the order parseSqueue reads them. */
export const SQUEUE_FORMAT = 'JobID:|,State:|,RestartCnt:|,Reason:';
/** sacct's fields, likewise (-X -n -P: one line per job, no header, `|` between fields). */
export const SACCT_FORMAT = 'JobIDRaw,State';

/** `squeue --noheader -O SQUEUE_FORMAT` lines. */
export function parseSqueue(stdout: string): SlurmJobStatus[] {
  return lines(stdout).map((line) => {
    const [jobId = '', state = '', restarts = '0'] = line.split('|');
    return { jobId: jobId.trim(), state: state.trim().toUpperCase(), restarts: Number(restarts) || 0 };
  });
}

/**
 * `sacct -X -n -P -D --format SACCT_FORMAT` lines: with duplicates, each requeue leaves a REQUEUED record
 * of the same job id, which counts as a restart.
 */
export function parseSacct(stdout: string): SlurmJobStatus[] {
  const byId = new Map<string, SlurmJobStatus>();
  for (const line of lines(stdout)) {
    const [jobId = '', rawState = ''] = line.split('|');
    const state = rawState.trim().split(/\s+/)[0]!.toUpperCase();
    const id = jobId.trim();
    const seen = byId.get(id);
    const requeued = state.startsWith('REQUEUE') ? 1 : 0;
    // The last record of a job id is its current one; earlier ones only add their requeues.
    byId.set(id, { jobId: id, state, restarts: (seen?.restarts ?? 0) + requeued });
  }
  return [...byId.values()];
}

const LIVE: Record<string, InstanceState> = {
  PENDING: 'pending',
  CONFIGURING: 'pending',
  RUNNING: 'running',
  COMPLETING: 'running',
  // Suspended (gang scheduling, an admin): the job resumes where it was, the run is not lost.
  SUSPENDED: 'running',
  RESIZING: 'running',
  SIGNALING: 'running',
  STAGE_OUT: 'running',
  RESV_DEL_HOLD: 'pending',
};

/**
 * The saga's view of a job: `preempted` when Slurm took it back (a preemption, or a requeue of any kind:
 * the job would start again with a spent token), `terminated` when it is over (completed, failed, cancelled,
 * out of time or memory, its node failed), else pending or running.
 */
export function instanceState(job: SlurmJobStatus): InstanceState {
  if (job.restarts > 0 || job.state === 'PREEMPTED' || job.state.startsWith('REQUEUE')) return 'preempted';
  return LIVE[job.state] ?? 'terminated';
}

/** Job states Slurm is done with: the job will not run again (a requeued job is PENDING or REQUEUE*). */
const OVER = new Set([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'BOOT_FAIL',
  'DEADLINE',
  'PREEMPTED',
  'REVOKED',
]);

/** Whether the job may still run (or is running): scancel has something to end. */
export function jobIsLive(job: SlurmJobStatus): boolean {
  return !OVER.has(job.state);
}

/** The job that stands for the run: a live one before a finished one, then the newest (highest id). */
export function currentJob(jobs: readonly SlurmJobStatus[]): SlurmJobStatus | undefined {
  const rank = (job: SlurmJobStatus) => (instanceState(job) === 'terminated' ? 1 : 0);
  return [...jobs].sort((a, b) => rank(a) - rank(b) || Number(b.jobId) - Number(a.jobId))[0];
}

function lines(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
