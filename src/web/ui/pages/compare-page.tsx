import type { RunData, VariationData } from '@assay/client/browser';
import type { RunMetricFigures } from '@assay/contract';
import { isTerminalRunState } from '@assay/contract/enums';
import { decodeMetricValue, MAX_METRIC_KEYS_PER_QUERY } from '@assay/contract/metric-values';
import { keepPreviousData, useQueries, useQuery } from '@tanstack/react-query';
import { memo, useCallback, useEffect, useMemo, useState } from 'react';
import { Link, useParams, useSearch } from 'wouter';
import { ChartControls, preloadChart, type ChartSettings } from '../components/chart-frame.tsx';
import {
  COMPARE_INTERVAL_MS,
  CompareOverlay,
  comparePoints,
  ConfigScatters,
  curvesQuery,
} from '../components/compare-charts.tsx';
import { runPath } from '../components/runs-table.tsx';
import { Empty, ErrorState, Loading, RunStateBadge } from '../components/status.tsx';
import {
  allPaths,
  capPaths,
  compareCells,
  differingPaths,
  flatten,
  legendLabels,
  MAX_METRICS_JSON_COLUMNS,
  type Cell,
} from '../compare-rows.ts';
import { allPages } from '../all-pages.ts';
import { chartOrder, defaultMetricKey, isSystemKey } from '../default-key.ts';
import { formatDuration } from '../format.ts';
import { formatMetric } from '../metric-series.ts';
import { queryKeys } from '../query-keys.ts';
import { runsRefetchInterval } from '../run-polling.ts';
import { listMetricsOutputs, METRICS_ASSET, readMetricsOutput } from '../run-metrics.ts';
import { useClient } from '../session.tsx';

interface Column {
  key: string;
  label: string;
  /** metric: a figure of the run's metrics.json; logged: a figure of a logged metric key. */
  group: 'run' | 'config' | 'metric' | 'logged';
  value: (row: Row) => Cell;
}

interface Row {
  run: RunData;
  variation: VariationData | undefined;
  config: Record<string, Cell>;
  metrics: Record<string, Cell> | null | undefined;
  /** The logged keys' figures; undefined while they load. */
  figures: Record<string, RunMetricFigures> | undefined;
}

/** How many logged keys get table columns before the reader picks (three columns each). */
const DEFAULT_COLUMN_KEYS = 4;
const FIGURES = ['last', 'min', 'max'] as const;

/** A figure as the table sorts it: a number, or the name of NaN or an infinity (those sort as text). */
function figureCell(figures: RunMetricFigures | undefined, figure: (typeof FIGURES)[number]): Cell {
  const value = figures?.[figure];
  if (value === undefined || value === null) return undefined;
  const n = decodeMetricValue(value);
  return Number.isFinite(n) ? n : formatMetric(n);
}

const durationMs = (run: RunData): number | null =>
  run.started_at ? (run.ended_at ? Date.parse(run.ended_at) : Date.now()) - Date.parse(run.started_at) : null;

/** Pages of the experiment's runs list a comparison reads at once (the API's largest page). */
const RUN_PAGE = 200;

/** The runs in the order the table and the legend list them: by variation, then run number. */
const byVariationAndNumber = (a: RunData, b: RunData) => a.n - b.n || a.r - b.r;

/**
 * An experiment's runs side by side (a sweep's with `?sweep=`): differing config, state, duration, metrics.
 */
export function ComparePage() {
  const { id } = useParams<{ id: string }>();
  const sweepId = new URLSearchParams(useSearch()).get('sweep');
  const client = useClient();
  const variations = useQuery({
    queryKey: queryKeys.variations(id),
    queryFn: () => client.variations.list(id),
  });
  const sweep = useQuery({
    queryKey: queryKeys.sweep(id, sweepId),
    queryFn: () => client.sweeps.get(id, sweepId!),
    enabled: sweepId !== null,
  });
  // Without a sweep named, the experiment's sweeps: when they agree on an objective, it is the default curve.
  const sweeps = useQuery({
    queryKey: queryKeys.sweeps(id, undefined),
    queryFn: () => client.sweeps.list(id),
    enabled: sweepId === null,
  });
  const objective = sweepId
    ? sweep.data?.declaration.objective?.metric
    : sharedObjective(sweeps.data?.items.map((s) => s.declaration.objective?.metric));
  // Every variation's runs in one read (a page per 200 runs), sent with the page's first reads: a list per
  // variation was ten requests for ten variations, queued behind the browser's six connections to the
  // service ahead of the curves.
  const runList = useQuery({
    queryKey: queryKeys.experimentRuns(id),
    queryFn: async () =>
      (await allPages((cursor) => client.runs.listForExperiment(id, { limit: RUN_PAGE, cursor }))).sort(
        byVariationAndNumber,
      ),
    refetchInterval: (query) => runsRefetchInterval(query.state.data),
  });
  const loading = variations.isPending || (sweepId !== null && sweep.isPending) || runList.isPending;
  // The same array until a list changes: the table, the overlay and the scatters are computed from it, and a
  // new one on every render (each of the page's reads renders it) redrew 100 curves and 2,000 cells
  // each time.
  const runs = useMemo(() => {
    const inSweep = sweep.data ? new Set(sweep.data.runs.map((r) => `${r.n}.${r.r}`)) : undefined;
    return (runList.data ?? []).filter((run) => !inSweep || inSweep.has(`${run.n}.${run.r}`));
  }, [runList.data, sweep.data]);
  // A run's outputs are complete once it has ended: the listing is read again whenever one more run has
  // ended. A ready output never changes, so each is read once.
  const ended = runs.filter((run) => isTerminalRunState(run.state)).length;
  const metricsOutputs = useQuery({
    queryKey: queryKeys.outputs(id, METRICS_ASSET, ended),
    queryFn: () => listMetricsOutputs(client, id),
    // Once every variation's runs have arrived: before, `ended` still grows with each list.
    enabled: !loading && runs.length > 0,
    placeholderData: keepPreviousData,
  });
  const outputOf = (run: RunData) => metricsOutputs.data?.get(run.id);
  const withOutput = runs.flatMap((run) => outputOf(run) ?? []);
  const outputReads = useQueries({
    queries: withOutput.map((asset) => ({
      queryKey: queryKeys.assetJson(asset.id),
      queryFn: () => readMetricsOutput(client, asset),
      staleTime: Infinity,
    })),
  });
  const outputRead = new Map(withOutput.map((asset, i) => [asset.id, outputReads[i]!]));
  /** A run's metrics.json figures: undefined while they load, null when it wrote none. */
  const metricsOf = (run: RunData): Record<string, Cell> | null | undefined => {
    if (!metricsOutputs.data) return undefined;
    const asset = outputOf(run);
    return asset ? outputRead.get(asset.id)?.data : null;
  };
  const [sort, setSort] = useState<{ key: string; direction: 'ascending' | 'descending' }>({
    key: 'run',
    direction: 'ascending',
  });

  // Logged metrics: every key any run of the experiment logged (one read for all runs), the keys the table
  // shows (the first four until the reader picks), and the key the charts draw. None of these reads waits for
  // the runs: the figures and the curves are asked for while the runs' lists load.
  const running = runs.some((r) => r.state === 'running');
  const keyList = useQuery({
    queryKey: queryKeys.metricKeys(id),
    queryFn: () => allPages((cursor) => client.experiments.metricKeys(id, { cursor })),
    refetchInterval: running ? COMPARE_INTERVAL_MS : false,
  });
  const allKeys = useMemo(
    () => (keyList.data ?? []).map((k) => k.key).sort((a, b) => a.localeCompare(b)),
    [keyList.data],
  );
  const [pickedColumns, setPickedColumns] = useState<string[] | null>(null);
  const [pickedChartKey, setChartKey] = useState<string | null>(null);
  const [settings, setSettings] = useState<ChartSettings>({ log: false, smoothing: 0 });
  const columnKeys = (pickedColumns ?? defaultColumnKeys(allKeys, objective)).filter((k) =>
    allKeys.includes(k),
  );
  const chartKey =
    pickedChartKey && allKeys.includes(pickedChartKey)
      ? pickedChartKey
      : defaultMetricKey(allKeys, objective);
  const figureKeys = [...new Set([...(chartKey ? [chartKey] : []), ...columnKeys])].slice(
    0,
    MAX_METRIC_KEYS_PER_QUERY,
  );
  const figures = useQuery({
    queryKey: queryKeys.metricFigures(id, figureKeys, running),
    queryFn: () => client.experiments.metrics(id, figureKeys),
    enabled: figureKeys.length > 0,
    refetchInterval: running ? COMPARE_INTERVAL_MS : false,
  });
  const figuresByRun = new Map(figures.data?.items.map((item) => [item.run_id, item.metrics]));
  const curvePoints = comparePoints(keyList.data?.find((k) => k.key === chartKey)?.runs ?? 0);
  // Only to start the read early: the overlay draws the answer, and the page need not render again when
  // it comes.
  useQuery({
    ...curvesQuery(client, id, chartKey ?? '', curvePoints, null, running),
    enabled: !!chartKey,
    notifyOnChangeProps: [],
  });
  // The chart code after the reads above, so that its two files do not take connections ahead of them.
  useEffect(preloadChart, []);

  // The table's rows, columns and order, computed again only when one of their inputs changed (each read the
  // page makes renders it once more; 100 rows × 20 columns each time kept the main thread busy).
  const outputsVersion = outputReads.map((q) => q.dataUpdatedAt).join(',');
  const columnsKey = columnKeys.join('\n');
  const table = useMemo(() => {
    const byN = new Map((variations.data ?? []).map((v) => [v.n, v]));
    const rows: Row[] = runs.map((run) => ({
      run,
      variation: byN.get(run.n),
      config: flatten(byN.get(run.n)?.config_json ?? {}),
      metrics: metricsOf(run),
      figures: figures.data ? (figuresByRun.get(run.id) ?? {}) : undefined,
    }));
    const metricPaths = capPaths(allPaths(rows.flatMap((r) => (r.metrics ? [r.metrics] : []))));
    const columns = columnsFor(rows, columnKeys, metricPaths.shown);
    const column = columns.find((c) => c.key === sort.key) ?? columns[0]!;
    const sorted = [...rows].sort(
      (a, b) => compareCells(column.value(a), column.value(b), sort.direction) || a.run.n - b.run.n,
    );
    const shown = sorted.map((row): ShownRow => ({
      run: row.run,
      cells: columns.map((c) => cellText(c, row)),
    }));
    const started = rows.filter((r) => r.run.state !== 'pending');
    const configPaths = differingPaths(rows.map((r) => r.config));
    const byRun = new Map(rows.map((row) => [row.run.id, { ...row.run, config: row.config }]));
    // Over the runs a chart draws: runs of one variation are told apart only when both are drawn.
    const labels = (runIds: string[]) =>
      legendLabels(
        runIds.flatMap((runId) => byRun.get(runId) ?? []),
        configPaths,
      );
    return { columns, column, shown, started, configPaths, labels, metricPaths: metricPaths.total };
    // outputsVersion stands for the outputs' reads (metricsOf), columnsKey for columnKeys, figures.data for
    // figuresByRun: each is new on every render, and its stand-in changes exactly when its content does.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runs, variations.data, metricsOutputs.data, outputsVersion, figures.data, columnsKey, sort]);
  const onSort = useCallback(
    (key: string) =>
      setSort((s) => ({
        key,
        direction: s.key === key && s.direction === 'ascending' ? 'descending' : 'ascending',
      })),
    [],
  );

  const experimentPath = `/experiments/${encodeURIComponent(id)}`;
  const back = (
    <p>
      <Link href={sweepId ? `${experimentPath}/sweeps/${encodeURIComponent(sweepId)}` : experimentPath}>
        ← {sweepId ? 'Sweep' : 'Experiment'}
      </Link>
    </p>
  );
  const failed = [variations, sweep, runList].find((q) => q.isError);
  let body;
  if (failed) body = <ErrorState error={failed.error} title="Could not load the runs" />;
  else if (loading) body = <Loading what="the runs" />;
  else if (runs.length === 0)
    body = <Empty command={`assay runs create ${id} 1`}>No runs to compare yet.</Empty>;
  else {
    const metricsFailed = [metricsOutputs, ...outputReads].find((m) => m.isError);
    const loggedFailed = [keyList, figures].find((q) => q.isError);
    body = (
      <>
        {metricsFailed && (
          <ErrorState error={metricsFailed.error} title={`Could not read a ${METRICS_ASSET}`} />
        )}
        {loggedFailed && <ErrorState error={loggedFailed.error} title="Could not read the logged metrics" />}
        {allKeys.length > 0 && (
          <fieldset className="compare-controls">
            <legend>Metric columns (last, min, max)</legend>
            {allKeys.map((key) => (
              <label key={key} className="inline">
                <input
                  type="checkbox"
                  checked={columnKeys.includes(key)}
                  onChange={(e) =>
                    setPickedColumns(
                      e.target.checked ? [...columnKeys, key] : columnKeys.filter((k) => k !== key),
                    )
                  }
                />
                <span>{key}</span>
              </label>
            ))}
          </fieldset>
        )}
        {table.metricPaths > MAX_METRICS_JSON_COLUMNS && (
          <p className="hint" role="note">
            The runs’ <code>{METRICS_ASSET}</code> outputs hold {table.metricPaths.toLocaleString()} figures:
            the table shows the first {MAX_METRICS_JSON_COLUMNS} of them, by name.
          </p>
        )}
        <CompareTable
          columns={table.columns}
          rows={table.shown}
          sortKey={table.column.key}
          direction={sort.direction}
          onSort={onSort}
        />
        {chartKey && (
          <section aria-labelledby="curves-title">
            <h2 id="curves-title">Curves</h2>
            <div className="filters chart-controls">
              <label>
                <span>Metric</span>
                <select value={chartKey} onChange={(e) => setChartKey(e.target.value)}>
                  {allKeys.map((key) => (
                    <option key={key} value={key}>
                      {key}
                    </option>
                  ))}
                </select>
              </label>
            </div>
            <ChartControls settings={settings} onChange={setSettings} />
            <CompareOverlay
              key={chartKey}
              experimentId={id}
              runs={runs}
              metricKey={chartKey}
              maxPoints={curvePoints}
              settings={settings}
              labels={table.labels}
            />
            {table.configPaths.length > 0 && (
              <>
                <h2>Final {chartKey} by config</h2>
                <ConfigScatters
                  paths={table.configPaths}
                  rows={table.started}
                  metricKey={chartKey}
                  log={settings.log}
                />
              </>
            )}
          </section>
        )}
      </>
    );
  }
  return (
    <article aria-labelledby="compare-title">
      {back}
      <h1 id="compare-title">Compare runs</h1>
      <p className="hint">
        Config values that differ between the variations, each run’s state and duration, the last, smallest
        and largest value of the metrics it logged, and the figures of its <code>{METRICS_ASSET}</code> output
        when it wrote one. Click a column’s header to sort by it. Below: one metric’s curves, and each
        differing config value against that metric’s final value.
      </p>
      {body}
    </article>
  );
}

/** The keys with table columns until the reader picks: the objective, then training keys; system keys last. */
function defaultColumnKeys(keys: string[], objective: string | undefined): string[] {
  const training = keys.filter((k) => !isSystemKey(k));
  return chartOrder(training.length > 0 ? training : keys, (k) => k, objective).slice(0, DEFAULT_COLUMN_KEYS);
}

/** The objective the sweeps share, when every one that declares one declares the same. */
function sharedObjective(metrics: Array<string | undefined> | undefined): string | undefined {
  const declared = new Set((metrics ?? []).filter((m): m is string => !!m));
  return declared.size === 1 ? [...declared][0] : undefined;
}

/** The table's columns; `metricPaths`: the figures of `metrics.json` outputs it shows. */
function columnsFor(rows: Row[], loggedKeys: string[], metricPaths: string[]): Column[] {
  const configPaths = differingPaths(rows.map((r) => r.config));
  return [
    { key: 'run', label: 'Run', group: 'run', value: (r) => `${r.run.n}.${r.run.r}` },
    { key: 'variation', label: 'Variation', group: 'run', value: (r) => r.variation?.name },
    ...configPaths.map((p): Column => ({
      key: `config:${p}`,
      label: p,
      group: 'config',
      value: (r) => r.config[p],
    })),
    { key: 'state', label: 'State', group: 'run', value: (r) => r.run.state },
    { key: 'duration', label: 'Duration', group: 'run', value: (r) => durationMs(r.run) },
    ...loggedKeys.flatMap((k) =>
      FIGURES.map((figure): Column => ({
        key: `logged:${k}:${figure}`,
        label: `${k} (${figure})`,
        group: 'logged',
        value: (r) => figureCell(r.figures?.[k], figure),
      })),
    ),
    ...metricPaths.map((p): Column => ({
      key: `metric:${p}`,
      label: p,
      group: 'metric',
      value: (r) => r.metrics?.[p],
    })),
  ];
}

/**
 * What a cell other than the run's link and its state shows; muted for no value (—) or one still read (…).
 */
interface CellText {
  text: string;
  muted: boolean;
}

const ABSENT: CellText = { text: '—', muted: true };
const READING: CellText = { text: '…', muted: true };

function cellText(column: Column, row: Row): CellText {
  if (column.key === 'duration')
    return { text: formatDuration(row.run.started_at, row.run.ended_at), muted: false };
  if (column.group === 'metric' && row.metrics === undefined) return READING;
  if (column.group === 'logged' && row.figures === undefined) return READING;
  const value = column.value(row);
  if (value === undefined || value === null) return ABSENT;
  return {
    text: column.group === 'logged' && typeof value === 'number' ? formatMetric(value) : String(value),
    muted: false,
  };
}

/**
 * A row with its cells' text, worked out with the table, so that a row whose text is unchanged is
 * not rendered.
 */
interface ShownRow {
  run: RunData;
  cells: CellText[];
}

/** Rendered again only when its rows, columns or order change, not with each of the page's other reads. */
const CompareTable = memo(function CompareTable({
  columns,
  rows,
  sortKey,
  direction,
  onSort,
}: {
  columns: Column[];
  rows: ShownRow[];
  sortKey: string;
  direction: 'ascending' | 'descending';
  onSort: (key: string) => void;
}) {
  const sort = { key: sortKey, direction };
  return (
    <div className="table-scroll">
      <table className="compare">
        <thead>
          <tr>
            {columns.map((c) => (
              <th
                key={c.key}
                scope="col"
                className={`col-${c.group}`}
                aria-sort={sort.key === c.key ? sort.direction : undefined}
              >
                <button type="button" className="sort-header" onClick={() => onSort(c.key)}>
                  {(c.group === 'metric' || c.group === 'logged') && (
                    <span className="visually-hidden">metric </span>
                  )}
                  {c.label}
                  <span aria-hidden="true">
                    {sort.key === c.key ? (sort.direction === 'ascending' ? ' ▲' : ' ▼') : ''}
                  </span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <CompareRow key={row.run.id} columns={columns} row={row} />
          ))}
        </tbody>
      </table>
    </div>
  );
});

/**
 * One run's row. Its cells are plain text in a `td` whose class marks a missing or pending value, so a value
 * that arrives changes a text node in place; and a row whose text did not change is skipped (each of the
 * page's reads — the figures, the outputs, a poll — would otherwise render 100 rows × 20 cells again).
 */
const CompareRow = memo(
  function CompareRow({ columns, row }: { columns: Column[]; row: ShownRow }) {
    const { run } = row;
    return (
      <tr data-run={`${run.n}.${run.r}`}>
        {columns.map((c, i) => {
          if (c.key === 'run')
            return (
              <td key={c.key} className="col-run">
                <Link href={runPath(run)}>{`${run.n}.${run.r}`}</Link>
                {run.name && (
                  <div className="muted run-name" title={run.name}>
                    {run.name}
                  </div>
                )}
              </td>
            );
          if (c.key === 'state')
            return (
              <td key={c.key} className="col-run">
                <RunStateBadge run={run} />
              </td>
            );
          const cell = row.cells[i]!;
          return (
            <td key={c.key} className={cell.muted ? `col-${c.group} muted` : `col-${c.group}`}>
              {cell.text}
            </td>
          );
        })}
      </tr>
    );
  },
  (a, b) =>
    a.row.run === b.row.run &&
    a.columns.length === b.columns.length &&
    a.columns.every((c, i) => c.key === b.columns[i]!.key) &&
    a.row.cells.every(
      (cell, i) => cell.text === b.row.cells[i]!.text && cell.muted === b.row.cells[i]!.muted,
    ),
);
