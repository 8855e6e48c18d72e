import type { SweepRunCounts } from '@assay/contract';
import { Fragment } from 'react';
import { endedRuns, OUTCOME_LABEL } from '../sweep-trials.ts';

// Ended outcomes first (the bar fills from the left as runs end), then the runs still to come.
const SEGMENTS = ['succeeded', 'stopped_early', 'retried', 'failed', 'running', 'pending'] as const;
// Always counted in the text; stopped early and retried only when some are (a grid sweep has neither).
const ALWAYS = new Set<string>(['succeeded', 'failed', 'running', 'pending']);

/** One bar split by outcome; the ended share is the progressbar's value, the counts are text beside it. */
export function SweepProgressBar({ progress }: { progress: SweepRunCounts }) {
  const ended = endedRuns(progress);
  const reasons = Object.entries(progress.failed_by_reason).map(([reason, n]) => `${reason}: ${n}`);
  const share = (n: number) => (progress.total ? (100 * n) / progress.total : 0);
  const counted = SEGMENTS.filter((s) => ALWAYS.has(s) || progress[s] > 0);
  return (
    <section aria-labelledby="sweep-progress-title">
      <h2 id="sweep-progress-title">Progress</h2>
      <div
        className="sweep-progress"
        role="progressbar"
        aria-labelledby="sweep-progress-title"
        aria-valuemin={0}
        aria-valuemax={progress.total}
        aria-valuenow={ended}
        aria-valuetext={`${ended} of ${progress.total} runs ended`}
      >
        {SEGMENTS.map((state) =>
          progress[state] > 0 ? (
            <span
              key={state}
              className={`segment state-${state}`}
              style={{ width: `${share(progress[state])}%` }}
            />
          ) : null,
        )}
      </div>
      <p className="sweep-counts" data-testid="sweep-counts" aria-live="polite">
        {counted.map((state, i) => (
          // The separator outside the unbreakable count, so a narrow screen wraps between counts.
          <Fragment key={state}>
            {i > 0 && ' · '}
            <span className="sweep-count">
              <span className={`count-swatch state-${state}`} aria-hidden="true" />
              {progress[state]} {OUTCOME_LABEL[state]}
            </span>
          </Fragment>
        ))}{' '}
        · {progress.total} in all
        {progress.done ? ' · done' : ''}
      </p>
      {reasons.length > 0 && <p data-testid="sweep-failures">Failed by reason: {reasons.join(' · ')}</p>}
    </section>
  );
}
