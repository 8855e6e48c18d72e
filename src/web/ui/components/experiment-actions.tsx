import type { ExperimentDetail } from '@assay/client/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { queryKeys } from '../query-keys.ts';
import { movesOffered, type ExperimentMove } from '../experiment-actions.ts';
import { useExperimentRefresh } from '../experiment-refresh.ts';
import { useClient } from '../session.tsx';
import { ErrorState } from './status.tsx';

const LABELS: Record<ExperimentMove, string> = {
  commit: 'Commit',
  conclude: 'Conclude',
  retract: 'Retract…',
};
const HINTS: Record<ExperimentMove, string> = {
  commit: 'Freezes the variations; runs become possible.',
  conclude: 'No new runs after this.',
  retract: 'Marks the results as not to be relied on, with a reason.',
};

/** The state moves the experiment's state offers; retract asks for the reason in a dialog first. */
export function ExperimentActions({ experiment }: { experiment: ExperimentDetail }) {
  const client = useClient();
  const refresh = useExperimentRefresh(experiment.id);
  const dialog = useRef<HTMLDialogElement>(null);
  const [reason, setReason] = useState('');
  // Whether the retract dialog is open: its own error state shows inside it then, not twice.
  const [asking, setAsking] = useState(false);
  const move = useMutation({
    mutationFn: ({ to, why }: { to: ExperimentMove; why?: string }) =>
      to === 'retract'
        ? client.experiments.retract(experiment.id, why ?? '')
        : client.experiments[to](experiment.id),
    onSuccess: () => {
      dialog.current?.close();
      refresh();
    },
  });
  const moves = movesOffered(experiment.state);
  if (moves.length === 0 && experiment.state !== 'draft') return null;
  const askReason = () => {
    dialog.current?.showModal();
    setAsking(true);
  };
  const retract = (event: FormEvent) => {
    event.preventDefault();
    move.mutate({ to: 'retract', why: reason.trim() });
  };
  return (
    <div className="actions" aria-label="Experiment state">
      {moves.map((to) => (
        <button
          key={to}
          type="button"
          title={HINTS[to]}
          disabled={move.isPending}
          onClick={() => (to === 'retract' ? askReason() : move.mutate({ to }))}
        >
          {LABELS[to]}
        </button>
      ))}
      {experiment.state === 'draft' && <DeleteDraft experiment={experiment} />}
      {move.isError && !asking && <ErrorState error={move.error} title="The state did not change" />}
      <dialog ref={dialog} aria-labelledby="retract-title" onClose={() => setAsking(false)}>
        <form onSubmit={retract} className="stacked">
          <h2 id="retract-title">Retract this experiment</h2>
          <label>
            <span>Reason (kept with the experiment)</span>
            <textarea value={reason} onChange={(e) => setReason(e.target.value)} rows={3} required />
          </label>
          {move.isError && <ErrorState error={move.error} />}
          <div className="actions">
            <button type="submit" className="danger" disabled={move.isPending || reason.trim() === ''}>
              Retract
            </button>
            <button type="button" onClick={() => dialog.current?.close()}>
              Keep it
            </button>
          </div>
        </form>
      </dialog>
    </div>
  );
}

/**
 * Deletes a draft, with its variations and test runs, once confirmed in a dialog; the server refuses any
 * other state. The page it was on is gone after: back to the list.
 */
function DeleteDraft({ experiment }: { experiment: ExperimentDetail }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const dialog = useRef<HTMLDialogElement>(null);
  const remove = useMutation({
    mutationFn: () => client.experiments.delete(experiment.id),
    onSuccess: () => {
      dialog.current?.close();
      queryClient.removeQueries({ queryKey: queryKeys.experiment(experiment.id) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.experiments() });
      navigate('/');
    },
  });
  return (
    <>
      <button type="button" className="danger" onClick={() => dialog.current?.showModal()}>
        Delete draft…
      </button>
      <dialog ref={dialog} aria-labelledby="delete-title">
        <div className="stacked">
          <h2 id="delete-title">Delete this draft?</h2>
          <p>
            “{experiment.name}” and its variations and test runs are deleted for good. Only a draft can be: a
            committed experiment is kept.
          </p>
          {remove.isError && <ErrorState error={remove.error} title="The draft was not deleted" />}
          <div className="actions">
            <button
              type="button"
              className="danger"
              disabled={remove.isPending}
              onClick={() => remove.mutate()}
            >
              Delete draft
            </button>
            <button type="button" onClick={() => dialog.current?.close()}>
              Keep it
            </button>
          </div>
        </div>
      </dialog>
    </>
  );
}
