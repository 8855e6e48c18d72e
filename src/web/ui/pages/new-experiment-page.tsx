import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { ErrorState } from '../components/status.tsx';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';

export function NewExperimentPage() {
  const client = useClient();
  const { scope } = useSession();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [hypothesis, setHypothesis] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: () => client.experiments.create({ name, hypothesis, description, organizationId: scope }),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.experiments() });
      navigate(`/experiments/${encodeURIComponent(created.id)}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <section aria-labelledby="new-experiment-title">
      <p>
        <Link href="/">← Experiments</Link>
      </p>
      <h1 id="new-experiment-title">New experiment</h1>
      <form className="stacked" onSubmit={submit}>
        <label>
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </label>
        <label>
          <span>Hypothesis</span>
          <textarea value={hypothesis} onChange={(e) => setHypothesis(e.target.value)} rows={3} />
        </label>
        <label>
          <span>Description</span>
          <textarea value={description} onChange={(e) => setDescription(e.target.value)} rows={5} />
        </label>
        <p className="hint">It starts as a draft: add variations, then commit it to run them.</p>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create experiment'}
        </button>
      </form>
      {create.isError && <ErrorState error={create.error} title="Could not create the experiment" />}
    </section>
  );
}
