import { SEARCH_STRATEGIES, type SearchStrategy } from '@assay/contract/enums';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { INITIAL_TUNING, sweepRequest, type PointsStrategy, type TuningState } from '../sweep-request.ts';
import { ErrorState } from './status.tsx';
import { sweepPath } from './sweep-list.tsx';
import { SearchFields, TuningFields } from './sweep-tuning-fields.tsx';

const BASE_EXAMPLE = 'lr: 0.1\nseed: 1\nlaunch:\n  command: python train.py\n';
const GRID_EXAMPLE = 'lr: 0.1, 0.01\nseed: 1, 2';
const LIST_EXAMPLE = '[{"lr": 0.1, "seed": 1}, {"lr": 0.01, "seed": 2}]';

const STRATEGY_LABEL: Record<PointsStrategy | SearchStrategy, string> = {
  grid: 'grid: every combination',
  list: 'list: the points given',
  random: 'random: sampled from the space',
  sobol: 'sobol: quasi-random, evenly spread',
  tpe: 'tpe: Bayesian, learns from the trials',
};

/** Creates a sweep on a draft: a base YAML, then the points (grid, list) or a space to search; opens it after. */
export function SweepForm({ experimentId }: { experimentId: string }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [baseYaml, setBaseYaml] = useState('');
  const [strategy, setStrategy] = useState<PointsStrategy | SearchStrategy>('grid');
  const [points, setPoints] = useState('');
  const [tuning, setTuning] = useState<TuningState>(INITIAL_TUNING);
  const [concurrency, setConcurrency] = useState('4');
  const searching = strategy !== 'grid' && strategy !== 'list';
  const create = useMutation({
    mutationFn: async () =>
      client.sweeps.create(
        experimentId,
        await sweepRequest({ strategy, baseYaml, points, tuning, concurrency: Number(concurrency) }),
      ),
    onSuccess: (sweep) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(experimentId) });
      navigate(sweepPath(experimentId, sweep.id));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="card stacked" onSubmit={submit} aria-labelledby="sweep-form-title">
      <h3 id="sweep-form-title">Create a sweep</h3>
      <p className="hint">
        The sweep commits the experiment; each point (or trial) becomes a variation with a managed run.
      </p>
      <label>
        <span>Base config YAML</span>
        <textarea
          className="code"
          rows={6}
          spellCheck={false}
          placeholder={BASE_EXAMPLE}
          value={baseYaml}
          onChange={(e) => setBaseYaml(e.target.value)}
          required
        />
      </label>
      <label className="inline">
        <span>Strategy</span>
        <select value={strategy} onChange={(e) => setStrategy(e.target.value as typeof strategy)}>
          {(['grid', 'list', ...SEARCH_STRATEGIES] as const).map((s) => (
            <option key={s} value={s}>
              {STRATEGY_LABEL[s]}
            </option>
          ))}
        </select>
      </label>
      {searching ? (
        <SearchFields state={tuning} onChange={setTuning} />
      ) : (
        <>
          <label>
            <span>{strategy === 'grid' ? 'Grid axes, one per line' : 'Points, a JSON array'}</span>
            <textarea
              className="code"
              rows={4}
              spellCheck={false}
              placeholder={strategy === 'grid' ? GRID_EXAMPLE : LIST_EXAMPLE}
              value={points}
              onChange={(e) => setPoints(e.target.value)}
              aria-describedby="sweep-points-hint"
              required
            />
          </label>
          <p id="sweep-points-hint" className="hint">
            Keys are dotted paths into the base config (<code>optimizer.lr</code>).{' '}
            {strategy === 'grid' ? 'Values are separated by commas.' : 'Each object is one variation.'}
          </p>
        </>
      )}
      <TuningFields state={tuning} onChange={setTuning} needsObjective={strategy === 'tpe'} />
      <label className="inline">
        <span>Concurrency</span>
        <input
          type="number"
          min={1}
          max={64}
          value={concurrency}
          onChange={(e) => setConcurrency(e.target.value)}
        />
      </label>
      {create.isError && <ErrorState error={create.error} title="The sweep was not created" />}
      <button type="submit" className="primary" disabled={create.isPending}>
        Create sweep
      </button>
    </form>
  );
}
