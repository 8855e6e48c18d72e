// The GPUs `local` hands out (ASSAY_LOCAL_GPUS), and the run slots beside them (ASSAY_LOCAL_MAX_RUNS): the
// capacity of the compute queue (src/server/runs/compute-queue.ts).
import { execFileSync } from 'node:child_process';
import type { Env } from '../settings/env-values.ts';
import { readSetting } from '../settings/read-setting.ts';

export interface LocalCapacity {
  /** Managed runs at once. */
  readonly maxRuns: number;
  /** The GPU ids runs are granted; empty on a machine without GPUs. */
  readonly gpuIds: readonly number[];
}

export function localCapacity(env: Env): LocalCapacity {
  return Object.freeze({
    maxRuns: readSetting(env, 'ASSAY_LOCAL_MAX_RUNS'),
    gpuIds: Object.freeze(localGpuIds(env)),
  });
}

/** ASSAY_LOCAL_GPUS (`none`, or ids such as `0,1,2,3`); unset: what `nvidia-smi -L` lists, if it is here. */
export function localGpuIds(env: Env): number[] {
  const set = readSetting(env, 'ASSAY_LOCAL_GPUS');
  if (set === 'none') return [];
  if (set !== undefined) return [...new Set(set.split(',').map(Number))].sort((a, b) => a - b);
  return detectGpus(env.PATH ?? process.env.PATH);
}

/** `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)` lines; no binary, an error or a timeout: none. */
export function detectGpus(pathVar: string | undefined): number[] {
  let listed: string;
  try {
    listed = execFileSync('nvidia-smi', ['-L'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: pathVar ?? '' },
    });
  } catch {
    return [];
  }
  return parseGpuList(listed);
}

export function parseGpuList(listed: string): number[] {
  const ids = [...listed.matchAll(/^GPU (\d+):/gm)].map((m) => Number(m[1]));
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** Why a run asking `gpus` can never start on this machine, or undefined. */
export function gpuAskRefusal(gpus: number, capacity: LocalCapacity | undefined): string | undefined {
  if (!capacity || gpus <= capacity.gpuIds.length) return undefined;
  const has = capacity.gpuIds.length;
  const handsOut = has === 0 ? 'none' : `${has} (${capacity.gpuIds.join(',')})`;
  return `launch.gpus asks for ${gpus} GPUs, but this machine hands out ${handsOut} (ASSAY_LOCAL_GPUS): the run could never start`;
}
