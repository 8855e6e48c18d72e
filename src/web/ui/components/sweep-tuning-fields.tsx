import { EARLY_STOPPING_KIND_NAMES, GOALS, type Goal } from '@assay/contract/enums';
import type { TuningState } from '../sweep-request.ts';

const SPACE_EXAMPLE = [
  'lr: {distribution: log_uniform, low: 1.0e-5, high: 1}',
  'layers: {distribution: int, low: 1, high: 4}',
  'optimizer: {distribution: choice, values: [sgd, adam]}',
].join('\n');

type Props = { state: TuningState; onChange: (next: TuningState) => void };

/** The space, trials and seed of a random, sobol or tpe sweep. */
export function SearchFields({ state, onChange }: Props) {
  const set = (patch: Partial<TuningState>) => onChange({ ...state, ...patch });
  return (
    <>
      <label>
        <span>Search space YAML</span>
        <textarea
          className="code"
          rows={4}
          spellCheck={false}
          placeholder={SPACE_EXAMPLE}
          value={state.space}
          onChange={(e) => set({ space: e.target.value })}
          aria-describedby="sweep-space-hint"
          required
        />
      </label>
      <p id="sweep-space-hint" className="hint">
        One dotted path into the base config per line, each with a distribution: <code>uniform</code>,{' '}
        <code>log_uniform</code> and <code>int</code> take <code>low</code> and <code>high</code>;{' '}
        <code>choice</code> takes <code>values</code>.
      </p>
      <div className="form-row">
        <label className="inline">
          <span>Trials</span>
          <input
            type="number"
            min={1}
            value={state.trials}
            onChange={(e) => set({ trials: e.target.value })}
            required
          />
        </label>
        <label className="inline">
          <span>Seed</span>
          <input
            type="number"
            min={0}
            placeholder="any"
            value={state.seed}
            onChange={(e) => set({ seed: e.target.value })}
          />
        </label>
      </div>
    </>
  );
}

/** The objective, early stopping by it, and retries of failed trials: for every strategy. */
export function TuningFields({ state, onChange, needsObjective }: Props & { needsObjective: boolean }) {
  const set = (patch: Partial<TuningState>) => onChange({ ...state, ...patch });
  return (
    <fieldset className="tuning">
      <legend>Objective and stopping</legend>
      <div className="form-row">
        <label className="inline">
          <span>Objective metric</span>
          <input
            value={state.metric}
            placeholder="val_loss"
            onChange={(e) => set({ metric: e.target.value })}
            required={needsObjective || state.stopping !== ''}
          />
        </label>
        <label className="inline">
          <span>Goal</span>
          <select value={state.goal} onChange={(e) => set({ goal: e.target.value as Goal })}>
            {GOALS.map((g) => (
              <option key={g}>{g}</option>
            ))}
          </select>
        </label>
      </div>
      <div className="form-row">
        <label className="inline">
          <span>Early stopping</span>
          <select
            value={state.stopping}
            onChange={(e) => set({ stopping: e.target.value as TuningState['stopping'] })}
          >
            <option value="">none</option>
            {EARLY_STOPPING_KIND_NAMES.map((kind) => (
              <option key={kind}>{kind}</option>
            ))}
          </select>
        </label>
        {(state.stopping === 'asha' || state.stopping === 'hyperband') && (
          <label className="inline">
            <span>Max step</span>
            <input
              type="number"
              min={1}
              value={state.maxStep}
              placeholder={state.stopping === 'asha' ? 'optional' : ''}
              onChange={(e) => set({ maxStep: e.target.value })}
              required={state.stopping === 'hyperband'}
            />
          </label>
        )}
        <label className="inline">
          <span>Max retries</span>
          <input
            type="number"
            min={0}
            max={10}
            value={state.maxRetries}
            onChange={(e) => set({ maxRetries: e.target.value })}
          />
        </label>
      </div>
      <p className="hint">
        The objective is the last value a run logs under the metric. Early stopping ends the trials that fall
        behind at the same step; retries start a failed trial again (crash, heartbeat timeout, provision
        failed).
      </p>
    </fieldset>
  );
}
