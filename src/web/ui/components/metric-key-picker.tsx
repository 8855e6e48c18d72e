import type { RunData } from '@assay/client/browser';
import type { MetricSummary } from '@assay/contract';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { formatMetric } from '../metric-series.ts';
import { useClient } from '../session.tsx';
import type { ChartSettings } from './chart-frame.tsx';
import { Pager, useCursorPages } from './pager.tsx';
import { CHART_EVERY_KEY_UP_TO, runMetricKeysQuery } from '../run-metric-queries.ts';
import { KeyCharts } from './key-charts.tsx';
import { ErrorState } from './status.tsx';

/** Keys a page of the picker lists. */
const PICKER_PAGE = 50;
/** Charted before the reader picks: the run's first keys. */
const FIRST_PICKED = 4;
/** Charts at once: each one polls its series while the run runs. */
export const MAX_PICKED_CHARTS = 12;

/**
 * For a run with many metric keys: a searchable, paged list of its keys with their figures, where the reader
 * picks the few to chart (the first four until then), instead of a polling chart per key.
 */
export function MetricKeyPicker({
  run,
  firstKeys,
  settings,
  controls,
}: {
  run: RunData;
  firstKeys: MetricSummary[];
  settings: ChartSettings;
  controls: ReactNode;
}) {
  const client = useClient();
  const [search, setSearch] = useState('');
  const pages = useCursorPages();
  const contains = search.trim() || undefined;
  const list = useQuery({
    ...runMetricKeysQuery(client, run, { limit: PICKER_PAGE, cursor: pages.cursor, contains }),
    placeholderData: keepPreviousData,
  });
  // What was picked, as it was when picked; a key the current page lists shows that page's fresher figures.
  const [picked, setPicked] = useState<MetricSummary[] | null>(null);
  const fresh = new Map([...firstKeys, ...(list.data?.items ?? [])].map((s) => [s.key, s]));
  const charted = (picked ?? firstKeys.slice(0, FIRST_PICKED)).map((s) => fresh.get(s.key) ?? s);
  const isCharted = (key: string) => charted.some((s) => s.key === key);
  const toggle = (summary: MetricSummary, on: boolean) =>
    setPicked(on ? [...charted, summary] : charted.filter((s) => s.key !== summary.key));

  return (
    <>
      <section className="key-picker" aria-labelledby="key-picker-title">
        <h3 id="key-picker-title">Metric keys</h3>
        <p className="hint">
          This run logged more than {CHART_EVERY_KEY_UP_TO} metric keys: pick the ones to chart (at most{' '}
          {MAX_PICKED_CHARTS} at once). Charting {charted.length}.
        </p>
        <div className="filters">
          <label className="grow">
            <span>Search keys</span>
            <input
              type="search"
              value={search}
              placeholder="part of a key, e.g. loss"
              onChange={(e) => {
                setSearch(e.target.value);
                pages.reset();
              }}
            />
          </label>
          {charted.length > 0 && (
            <button type="button" onClick={() => setPicked([])}>
              Chart none
            </button>
          )}
        </div>
        {list.isError ? (
          <ErrorState error={list.error} title="Could not load the metric keys" />
        ) : (
          <KeyTable
            items={list.data?.items}
            isCharted={isCharted}
            full={charted.length >= MAX_PICKED_CHARTS}
            onToggle={toggle}
            search={contains}
          />
        )}
        <Pager pages={pages} nextCursor={list.data?.next_cursor} />
      </section>
      {controls}
      <KeyCharts run={run} summaries={charted} settings={settings} />
    </>
  );
}

/** One page of keys with their figures, each with the checkbox that charts it. */
function KeyTable({
  items,
  isCharted,
  full,
  onToggle,
  search,
}: {
  items: MetricSummary[] | undefined;
  isCharted: (key: string) => boolean;
  full: boolean;
  onToggle: (summary: MetricSummary, on: boolean) => void;
  search: string | undefined;
}) {
  if (!items) return <p className="muted">Loading the metric keys…</p>;
  if (items.length === 0) return <p className="muted">No metric key holds “{search}”.</p>;
  return (
    <div className="table-scroll">
      <table className="key-list">
        <thead>
          <tr>
            <th scope="col">Chart</th>
            <th scope="col">Last</th>
            <th scope="col">Min</th>
            <th scope="col">Max</th>
            <th scope="col">Points</th>
          </tr>
        </thead>
        <tbody>
          {items.map((s) => {
            const on = isCharted(s.key);
            return (
              <tr key={s.key} data-key={s.key}>
                <td>
                  <label className="inline">
                    <input
                      type="checkbox"
                      checked={on}
                      disabled={!on && full}
                      onChange={(e) => onToggle(s, e.target.checked)}
                    />
                    <span>{s.key}</span>
                  </label>
                </td>
                <td>{formatMetric(s.last.value)}</td>
                <td>{formatMetric(s.min)}</td>
                <td>{formatMetric(s.max)}</td>
                <td>{s.count.toLocaleString()}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
