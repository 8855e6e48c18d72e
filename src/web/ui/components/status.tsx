import { APIError } from '@assay/client/browser';
import type { ReactNode } from 'react';

/** What a failed call says: the server's error code and message when it answered, else the client's error. */
export function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof APIError) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: error.name, message: error.message };
  return { code: 'error', message: String(error) };
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** The error state of a page or a form: the server's code, then its message, as text. */
export function ErrorState({ error, title }: { error: unknown; title?: string }) {
  const { code, message } = describeError(error);
  return (
    <div className="error-state" role="alert">
      {title && <strong>{title}</strong>}
      <p>
        <code className="error-code">{code}</code> {message}
      </p>
    </div>
  );
}

/** An empty state says what to do next, in the UI and with the CLI. */
export function Empty({ children, command }: { children: ReactNode; command?: string }) {
  return (
    <div className="empty-state">
      <p>{children}</p>
      {command && (
        <p>
          From a terminal: <code>{command}</code>
        </p>
      )}
    </div>
  );
}

/** A state by name; `label` when the words differ from it (`stopped_early` reads "stopped early"). */
export function StateBadge({ state, label }: { state: string; label?: string }) {
  return <span className={`badge state-${state}`}>{label ?? state}</span>;
}

/**
 * A run's state, where a run stopped early by its sweep reads as such, in a neutral colour: it ended as the
 * sweep meant it to, which is not an error.
 */
export function RunStateBadge({ run }: { run: { state: string; failure_reason: string | null } }) {
  return run.state === 'failed' && run.failure_reason === 'stopped_early' ? (
    <StateBadge state="stopped_early" label="stopped early" />
  ) : (
    <StateBadge state={run.state} />
  );
}
