import type { RunData } from '@assay/client/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { formatTime } from '../format.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient } from '../session.tsx';
import { parseTags } from '../tags.ts';
import { MarkdownView } from './markdown-view.tsx';
import { ErrorState } from './status.tsx';
import { TagList } from './tag-list.tsx';

/**
 * A run's name, tags and notes (markdown, rendered as text styles only), editable in place, and its archive
 * switch: an archived run is kept but left out of lists and comparisons.
 */
export function RunLabels({ run }: { run: RunData }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const update = useMutation({
    mutationFn: (changes: Parameters<typeof client.runs.update>[3]) =>
      client.runs.update(run.experiment_id, run.n, run.r, changes),
    onSuccess: () => {
      setEditing(false);
      void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(run.experiment_id) });
    },
  });
  const archived = run.archived_at !== null;
  return (
    <section className="run-labels" aria-label="Name, tags and notes">
      {archived && (
        <p className="hint" role="note">
          Archived {formatTime(run.archived_at)}: left out of the experiment&apos;s run lists and comparisons.
        </p>
      )}
      {editing ? (
        <LabelsForm
          run={run}
          onSave={(changes) => update.mutate(changes)}
          onCancel={() => setEditing(false)}
          busy={update.isPending}
        />
      ) : (
        <>
          <TagList tags={run.tags} />
          {run.notes.trim() !== '' ? (
            <div className="notes" data-testid="run-notes">
              <MarkdownView source={run.notes} />
            </div>
          ) : (
            <p className="muted">No notes.</p>
          )}
          <div className="actions">
            <button type="button" onClick={() => setEditing(true)}>
              Edit name, tags and notes
            </button>
            <button
              type="button"
              disabled={update.isPending}
              onClick={() => update.mutate({ archived: !archived })}
              title={
                archived
                  ? 'Show it in lists and comparisons again.'
                  : 'Hide it from lists and comparisons; it is kept.'
              }
            >
              {archived ? 'Unarchive' : 'Archive'}
            </button>
          </div>
        </>
      )}
      {update.isError && <ErrorState error={update.error} title="The run was not changed" />}
    </section>
  );
}

function LabelsForm({
  run,
  onSave,
  onCancel,
  busy,
}: {
  run: RunData;
  onSave: (changes: { name: string | null; tags: string[]; notes: string }) => void;
  onCancel: () => void;
  busy: boolean;
}) {
  const [name, setName] = useState(run.name ?? '');
  const [tags, setTags] = useState(run.tags.join(', '));
  const [notes, setNotes] = useState(run.notes);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSave({ name: name.trim() || null, tags: parseTags(tags), notes });
  };
  return (
    <form className="stacked" onSubmit={submit} aria-label="Edit the run's labels">
      <label>
        <span>Name</span>
        <input
          value={name}
          maxLength={200}
          onChange={(e) => setName(e.target.value)}
          placeholder="e.g. baseline, long warmup"
        />
      </label>
      <label>
        <span>Tags (comma-separated)</span>
        <input value={tags} onChange={(e) => setTags(e.target.value)} placeholder="e.g. baseline, ablation" />
      </label>
      <label>
        <span>Notes (markdown)</span>
        <textarea value={notes} rows={6} maxLength={20_000} onChange={(e) => setNotes(e.target.value)} />
      </label>
      {notes.trim() !== '' && (
        <figure className="notes-preview">
          <figcaption className="muted">Preview</figcaption>
          <div className="notes">
            <MarkdownView source={notes} />
          </div>
        </figure>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
