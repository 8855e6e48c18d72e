// What the Slurm provider submits: the job's name (how a retried submit finds it again), sbatch's options
// (argv words, never spliced into a shell line) and the batch script (the runner with the run's variables).
import type { SlurmJob } from '@assay/contract';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { LaunchConfigError, ProvisionRefusedError } from './compute-provider.ts';
import type { SlurmConfig } from './slurm-config.ts';
import { execRunnerLine, exportLines, shellQuote } from './user-data.ts';

/**
 * The job's name: `assay-` and the workflow id when it is tame (run-<experiment>-<n>-<r>), else its hash.
 * squeue, sacct and scancel find the run's job by it, so provisioning twice never submits twice.
 */
export function slurmJobName(idempotencyKey: string): string {
  return /^[A-Za-z0-9._-]{1,120}$/.test(idempotencyKey)
    ? `assay-${idempotencyKey}`
    : `assay-${createHash('sha256').update(idempotencyKey).digest('hex')}`;
}

/**
 * sbatch options the provider sets itself: an operator's allowlist may never hand them to a launch block, since
 * they would move the job's output, its environment or its identity.
 */
const RESERVED = new Set([
  '--job-name',
  '--export',
  '--export-file',
  '--get-user-env',
  '--output',
  '--error',
  '--input',
  '--chdir',
  '--wrap',
  '--parsable',
  '--uid',
  '--gid',
  // A requeue (a preemption's, an admin's) is the provider's to handle: it reads one as a preemption and
  // cancels the requeued job, which would start again with a spent token (src/compute/slurm-status.ts).
  '--requeue',
  '--no-requeue',
  '--array',
]);

export type SlurmSubmit = {
  /** sbatch's argv, the script read from stdin. */
  argv: string[];
  /** The batch script (holds the one-time exchange token: it goes to sbatch's stdin, nowhere else). */
  script: string;
};

/** Where a run's job writes its output and starts: below the operator's work dir, one of each per job. */
export function slurmJobPaths(config: SlurmConfig, name: string) {
  return {
    output: path.posix.join(config.workDir, `${name}.out`),
    dir: path.posix.join(config.workDir, name),
  };
}

/**
 * sbatch's argv and the script for one run. The block's job fields win over the operator's defaults (the
 * allowlists were checked before); `--export=NONE` keeps the submitting service's environment, and so its
 * secrets, out of the job.
 */
export function buildSlurmSubmit(input: {
  config: SlurmConfig;
  name: string;
  job: SlurmJob | undefined;
  env: Record<string, string>;
  command: string | string[];
}): SlurmSubmit {
  const { config, name } = input;
  const job = input.job ?? {};
  const { output, dir } = slurmJobPaths(config, name);
  const optional = (option: string, value: string | number | undefined) =>
    value === undefined ? [] : [`${option}=${value}`];
  for (const option of job.extra ?? []) {
    if (RESERVED.has(option.split('=')[0]!))
      throw new ProvisionRefusedError(`launch.slurm.extra: ${option.split('=')[0]} is set by Assay itself`);
  }
  const argv = [
    'sbatch',
    '--parsable',
    // The block's extra options first: the provider's own below win wherever sbatch takes the last one.
    ...(job.extra ?? []),
    ...optional('--partition', job.partition ?? config.partition),
    ...optional('--account', job.account ?? config.account),
    ...optional('--qos', job.qos ?? config.qos),
    ...optional('--time', job.time_limit ?? config.timeLimit),
    ...optional('--gres', job.gres),
    ...optional('--cpus-per-task', job.cpus),
    ...optional('--mem', job.memory_mb === undefined ? undefined : `${job.memory_mb}M`),
    `--job-name=${name}`,
    '--export=NONE',
    `--chdir=${config.workDir}`,
    `--output=${output}`,
    `--error=${output}`,
  ];
  if (argv.some((word) => /[\n\0]/.test(word))) throw new LaunchConfigError('a Slurm option holds a newline');
  const script = [
    '#!/bin/bash',
    '# Assay managed run: the runner with the run’s variables. Its one credential is a one-time exchange',
    '# token, spent when the runner starts; nothing here echoes it.',
    'set -euo pipefail',
    'umask 077',
    ...exportLines(input.env),
    // Slurm signals every process of a job it preempts, requeues, times out or cancels: the runner then leaves
    // the run to the saga, which tells a preemption from a loss by the job's state (docs/production.md).
    'export ASSAY_RUN_ON_SIGNAL=leave',
    `mkdir -p ${shellQuote(dir)}`,
    `cd ${shellQuote(dir)}`,
    execRunnerLine(config.runner, input.command),
    '',
  ].join('\n');
  return { argv, script };
}
