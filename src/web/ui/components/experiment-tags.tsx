import type { ExperimentDetail } from '@assay/client/browser';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useExperimentRefresh } from '../experiment-refresh.ts';
import { useClient } from '../session.tsx';
import { parseTags } from '../tags.ts';
import { ErrorState } from './status.tsx';
import { TagList } from './tag-list.tsx';

/** An experiment's tags, editable in any state (the experiments list filters by them). */
export function ExperimentTags({ experiment }: { experiment: ExperimentDetail }) {
  const client = useClient();
  const refresh = useExperimentRefresh(experiment.id);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const save = useMutation({
    mutationFn: (tags: string[]) => client.experiments.update(experiment.id, { tags }),
    onSuccess: () => {
      setEditing(false);
      refresh();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(parseTags(text));
  };
  if (!editing)
    return (
      <span className="experiment-tags">
        {experiment.tags.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <TagList tags={experiment.tags} />
        )}{' '}
        <button
          type="button"
          onClick={() => {
            setText(experiment.tags.join(', '));
            setEditing(true);
          }}
        >
          Edit tags
        </button>
      </span>
    );
  return (
    <form className="filters" onSubmit={submit} aria-label="Edit the experiment's tags">
      <label className="grow">
        <span>Tags (comma-separated)</span>
        <input value={text} onChange={(e) => setText(e.target.value)} placeholder="e.g. vision, baseline" />
      </label>
      <button type="submit" className="primary" disabled={save.isPending}>
        Save tags
      </button>
      <button type="button" onClick={() => setEditing(false)}>
        Cancel
      </button>
      {save.isError && <ErrorState error={save.error} title="The tags were not changed" />}
    </form>
  );
}
