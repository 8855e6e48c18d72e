// The Optuna baselines of bench/sweeps.ts: bench/sweeps/optuna_baselines.py, one study per call.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export type Sampler = 'random' | 'tpe';

export interface StudyResult {
  mode: 'inprocess' | 'subprocess';
  sampler: Sampler;
  pruner: 'none' | 'sh';
  seed: number;
  trials: number;
  epochs: number;
  wall_s: number;
  best: number;
  best_params: Record<string, unknown>;
  trial_epochs: number;
  pruned: number;
  /** subprocess: SIGTERM sent → the child exited, per pruned trial. */
  stop_s: number[];
  /** subprocess: spawned → training began (Python start-up, imports, data), per trial. */
  start_s: number[];
}

export interface StudyRequest {
  python: string;
  mode: StudyResult['mode'];
  sampler: Sampler;
  pruner: StudyResult['pruner'];
  seed: number;
  trials: number;
  epochs: number;
}

const SCRIPT = path.join(import.meta.dirname, 'optuna_baselines.py');

/** Runs one Optuna study to its end and answers its summary line. */
export async function runStudy(request: StudyRequest): Promise<StudyResult> {
  const { python, ...rest } = request;
  const argv = [SCRIPT, ...Object.entries(rest).flatMap(([k, v]) => [`--${k}`, String(v)])];
  const { stdout } = await promisify(execFile)(python, argv, { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as StudyResult;
}
