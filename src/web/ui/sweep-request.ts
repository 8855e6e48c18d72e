// The sweep form's fields as the client's sweep request: text read into numbers, points and a space.
import type { SweepSpec } from '@assay/client/browser';
import type { EarlyStopping, EarlyStoppingKind, Goal, SearchStrategy } from '@assay/contract';
import { parseGridAxes, parsePointList, parseSpace } from './sweep-spec.ts';

export type PointsStrategy = 'grid' | 'list';

/** What the form's search and tuning fields hold, as typed (numbers are read on submit). */
export interface TuningState {
  space: string;
  trials: string;
  seed: string;
  metric: string;
  goal: Goal;
  stopping: EarlyStoppingKind | '';
  maxStep: string;
  maxRetries: string;
}

export const INITIAL_TUNING: TuningState = {
  space: '',
  trials: '16',
  seed: '',
  metric: '',
  goal: 'minimize',
  stopping: '',
  maxStep: '',
  maxRetries: '0',
};

export interface SweepFormFields {
  strategy: PointsStrategy | SearchStrategy;
  baseYaml: string;
  points: string;
  tuning: TuningState;
  concurrency: number;
}

/** A whole number from a field; undefined when the field is empty. */
const wholeNumber = (text: string) => (text.trim() === '' ? undefined : Number(text));

function earlyStopping(t: TuningState): EarlyStopping | undefined {
  const maxStep = wholeNumber(t.maxStep);
  if (t.stopping === 'asha') return { kind: 'asha', ...(maxStep === undefined ? {} : { max_step: maxStep }) };
  if (t.stopping === 'hyperband') return { kind: 'hyperband', max_step: maxStep ?? 0 };
  if (t.stopping === 'median') return { kind: 'median' };
  return undefined;
}

/**
 * The request the form describes. Throws an Error saying what is wrong with the points or the space before
 * anything is sent; the service checks the rest (422 naming the field).
 */
export async function sweepRequest(f: SweepFormFields): Promise<SweepSpec> {
  const t = f.tuning;
  const tuning = {
    objective: t.metric.trim() ? { metric: t.metric.trim(), goal: t.goal } : undefined,
    earlyStopping: earlyStopping(t),
    maxRetries: wholeNumber(t.maxRetries) || undefined,
  };
  const base = { baseYaml: f.baseYaml, concurrency: f.concurrency, ...tuning };
  if (f.strategy === 'grid') return { ...base, strategy: 'grid', grid: parseGridAxes(f.points) };
  if (f.strategy === 'list') return { ...base, strategy: 'list', list: parsePointList(f.points) };
  return {
    ...base,
    strategy: f.strategy,
    space: await parseSpace(t.space),
    trials: wholeNumber(t.trials) ?? 0,
    seed: wholeNumber(t.seed),
  };
}
