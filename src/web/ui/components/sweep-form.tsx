import type { SweepSpec } from '@assay/client/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { parseGridAxes, parsePointList } from '../sweep-spec.ts';
import { ErrorState } from './status.tsx';

const BASE_EXAMPLE = 'lr: 0.1\nseed: 1\nlaunch:\n  command: python train.py\n';
const GRID_EXAMPLE = 'lr: 0.1, 0.01\nseed: 1, 2';
const LIST_EXAMPLE = '[{"lr": 0.1, "seed": 1}, {"lr": 0.01, "seed": 2}]';

/** Creates a sweep on a draft: a base YAML and grid axes or a list of points; opens the sweep page after. */
export function SweepForm({ experimentId }: { experimentId: string }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [baseYaml, setBaseYaml] = useState('');
  const [mode, setMode] = useState<'grid' | 'list'>('grid');
  const [points, setPoints] = useState('');
  const [concurrency, setConcurrency] = useState('4');
  const create = useMutation({
    mutationFn: () => {
      const base = { baseYaml, concurrency: Number(concurrency) };
      const spec: SweepSpec =
        mode === 'grid'
          ? { ...base, strategy: 'grid', grid: parseGridAxes(points) }
          : { ...base, strategy: 'list', list: parsePointList(points) };
      return client.sweeps.create(experimentId, spec);
    },
    onSuccess: (sweep) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(experimentId) });
      navigate(`/experiments/${encodeURIComponent(experimentId)}/sweeps/${encodeURIComponent(sweep.id)}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="card stacked" onSubmit={submit} aria-labelledby="sweep-title">
      <h3 id="sweep-title">Create a sweep</h3>
      <p className="hint">
        One variation per point, then the experiment is committed and each variation gets a managed run.
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
      <fieldset className="inline-choice">
        <legend>Points</legend>
        <label className="inline">
          <input type="radio" name="sweep-mode" checked={mode === 'grid'} onChange={() => setMode('grid')} />
          <span>Grid (every combination)</span>
        </label>
        <label className="inline">
          <input type="radio" name="sweep-mode" checked={mode === 'list'} onChange={() => setMode('list')} />
          <span>List of points (JSON)</span>
        </label>
      </fieldset>
      <label>
        <span>{mode === 'grid' ? 'Grid axes, one per line' : 'Points, a JSON array'}</span>
        <textarea
          className="code"
          rows={4}
          spellCheck={false}
          placeholder={mode === 'grid' ? GRID_EXAMPLE : LIST_EXAMPLE}
          value={points}
          onChange={(e) => setPoints(e.target.value)}
          aria-describedby="sweep-points-hint"
          required
        />
      </label>
      <p id="sweep-points-hint" className="hint">
        Keys are dotted paths into the base config (<code>optimizer.lr</code>).{' '}
        {mode === 'grid' ? 'Values are separated by commas.' : 'Each object is one variation.'}
      </p>
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
