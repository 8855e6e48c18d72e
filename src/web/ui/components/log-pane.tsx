import { AuthenticationError, formatBytes, NotFoundError, type RunData } from '@assay/client/browser';
import { isTerminalRunState } from '@assay/contract/enums';
import { MAX_LOG_PAGE } from '@assay/contract/log-limits';
import { useQueryClient } from '@tanstack/react-query';
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import { cssColor } from '../ansi.ts';
import {
  appendPage,
  EMPTY_LOG,
  markMatches,
  MAX_SHOWN_LINES,
  searchEntries,
  type LogEntry,
  type MarkedSegment,
} from '../log-buffer.ts';
import { queryKeys } from '../query-keys.ts';
import { useClient, useSession } from '../session.tsx';
import { ErrorState } from './status.tsx';

/** A line's height in the pane (px): every row has the same, so only the rows in view are in the DOM. */
const ROW_PX = 20;
/** Rows rendered above and below the view, so a scroll shows no blank before the next render. */
const OVERSCAN = 30;
/** How long one follow read waits on the server for new lines. */
const FOLLOW_WAIT_S = 25;
/** After a failed read, the next one waits this long. */
const RETRY_MS = 5_000;

const logPath = (run: RunData) =>
  `/experiments/${encodeURIComponent(run.experiment_id)}/variations/${run.n}/runs/${run.r}/logs`;

/**
 * The run's console log, live: read from the start, then followed with long-polls until the service says the
 * log is complete (the run ended and every line was read). The newest MAX_SHOWN_LINES lines are kept, and only
 * the rows in view are rendered. Follow keeps the newest line in view; scrolling up stops that.
 */
export function LogPane({ run }: { run: RunData }) {
  const client = useClient();
  const queryClient = useQueryClient();
  const [buffer, setBuffer] = useState(EMPTY_LOG);
  const [read, setRead] = useState<{ loaded: boolean; complete: boolean; error: unknown }>({
    loaded: false,
    complete: false,
    error: null,
  });
  const [follow, setFollow] = useState(true);
  const [search, setSearch] = useState('');
  const { experiment_id: experimentId, n, r } = run;
  // The run's state as the loop reads it when the log completes, without restarting the loop on a change.
  const stateRef = useRef(run.state);
  useEffect(() => {
    stateRef.current = run.state;
  }, [run.state]);

  useEffect(() => {
    const abort = new AbortController();
    setBuffer(EMPTY_LOG);
    setRead({ loaded: false, complete: false, error: null });
    void (async () => {
      let after = 0;
      let caughtUp = false;
      while (!abort.signal.aborted) {
        try {
          const page = await client.runs.logs(experimentId, n, r, {
            after,
            limit: MAX_LOG_PAGE,
            waitS: caughtUp ? FOLLOW_WAIT_S : 0,
            signal: abort.signal,
          });
          if (abort.signal.aborted) return;
          after = page.next_after;
          setBuffer((b) => appendPage(b, page));
          setRead({ loaded: true, complete: page.complete, error: null });
          if (page.complete) {
            // The log is complete once the run has ended: the page's run may not know yet (it polls slower).
            if (!isTerminalRunState(stateRef.current))
              void queryClient.invalidateQueries({ queryKey: queryKeys.experiment(experimentId) });
            return;
          }
          caughtUp = page.lines.length < MAX_LOG_PAGE;
        } catch (error) {
          if (abort.signal.aborted) return;
          setRead((s) => ({ ...s, error }));
          // A signed-out key or a run that is gone: reading again will not help.
          if (error instanceof AuthenticationError || error instanceof NotFoundError) return;
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    })();
    return () => abort.abort();
  }, [client, queryClient, experimentId, n, r]);

  const query = search.trim();
  const shown = useMemo(() => searchEntries(buffer.entries, query), [buffer.entries, query]);
  const lines = buffer.trimmed + buffer.entries.filter((e) => e.kind === 'line').length;

  return (
    <section className="log-pane" aria-labelledby="log-title">
      <div className="page-title">
        <h2 id="log-title">Console log</h2>
        <span className="muted log-status" role="status">
          {!read.loaded
            ? 'reading…'
            : `${lines.toLocaleString()} line${lines === 1 ? '' : 's'} · ${read.complete ? 'complete' : 'live'}`}
        </span>
      </div>
      <div className="filters log-controls">
        <label className="grow">
          <span>Search the log</span>
          <input
            type="search"
            value={search}
            placeholder="text in a line, e.g. error"
            onChange={(e) => setSearch(e.target.value)}
          />
        </label>
        <label className="inline">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
          <span>Follow</span>
        </label>
        <LogDownload run={run} />
      </div>
      {read.error !== null && <ErrorState error={read.error} title="Could not read the log" />}
      {query !== '' && (
        <p className="hint" role="status">
          {shown.length.toLocaleString()} matching line{shown.length === 1 ? '' : 's'}
          {buffer.trimmed > 0 && ` of the last ${MAX_SHOWN_LINES.toLocaleString()}`}
        </p>
      )}
      {buffer.trimmed > 0 && (
        <p className="hint" role="note">
          Showing the last {MAX_SHOWN_LINES.toLocaleString()} lines: the {buffer.trimmed.toLocaleString()}{' '}
          before them are in the download.
        </p>
      )}
      {buffer.dropped.lines > 0 && (
        <p className="hint" role="note">
          The service kept this log within its size cap: it dropped {buffer.dropped.lines.toLocaleString()}{' '}
          lines ({formatBytes(buffer.dropped.bytes)}) from the middle, and kept the start and the end.
        </p>
      )}
      {read.loaded && buffer.entries.length === 0 ? (
        <p className="muted log-empty">
          {read.complete
            ? 'The run printed nothing.'
            : run.state === 'pending'
              ? 'The run has not started: its output shows here as it prints.'
              : 'No output yet: lines show here as the run prints them.'}
        </p>
      ) : (
        <LogLines entries={shown} query={query} follow={follow} onFollow={setFollow} />
      )}
    </section>
  );
}

/** The rows in view of a scrolling box as tall as all of them. */
function LogLines({
  entries,
  query,
  follow,
  onFollow,
}: {
  entries: LogEntry[];
  query: string;
  follow: boolean;
  onFollow: (on: boolean) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 400 });
  // Where the pane last scrolled itself: a scroll above it is the reader's.
  const autoTop = useRef(0);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setView((v) => ({ ...v, height: el.clientHeight }));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el || !follow) return;
    el.scrollTop = el.scrollHeight;
    autoTop.current = el.scrollTop;
    setView((v) => (v.top === el.scrollTop ? v : { ...v, top: el.scrollTop }));
  }, [entries, follow]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const top = el.scrollTop;
    setView({ top, height: el.clientHeight });
    const atBottom = top + el.clientHeight >= el.scrollHeight - ROW_PX;
    if (follow && !atBottom && top < autoTop.current - 2) onFollow(false);
    else if (!follow && atBottom && top > autoTop.current) onFollow(true);
  };

  const first = Math.max(0, Math.floor(view.top / ROW_PX) - OVERSCAN);
  const last = Math.min(entries.length, Math.ceil((view.top + view.height) / ROW_PX) + OVERSCAN);
  const rows = entries.slice(first, last);
  return (
    <div
      ref={box}
      className="log-lines"
      onScroll={onScroll}
      tabIndex={0}
      role="log"
      aria-label="Console log lines"
      data-rows={entries.length}
    >
      {entries.length === 0 && query !== '' ? (
        <p className="muted">No line holds “{query}”.</p>
      ) : (
        <div className="log-space" style={{ height: entries.length * ROW_PX }}>
          <div className="log-window" style={{ transform: `translateY(${first * ROW_PX}px)` }}>
            {rows.map((entry) => (
              <LogRow
                key={entry.kind === 'line' ? entry.seq : `gap-${entry.after}`}
                entry={entry}
                query={query}
              />
            ))}
          </div>
        </div>
      )}
    </div>
  );
}

const LogRow = memo(function LogRow({ entry, query }: { entry: LogEntry; query: string }) {
  if (entry.kind === 'gap')
    return (
      <div className="log-row log-gap" data-gap={entry.lines}>
        [… {entry.lines.toLocaleString()} lines dropped …]
      </div>
    );
  return (
    <div className={`log-row log-${entry.stream}`} data-seq={entry.seq} data-stream={entry.stream}>
      <span className="log-seq" title={entry.time} aria-hidden="true">
        {entry.seq}
      </span>
      {entry.stream === 'stderr' && <span className="visually-hidden">stderr: </span>}
      <span className="log-text">
        {markMatches(entry.segments, query).map((segment, i) => (
          <Styled key={i} segment={segment} />
        ))}
      </span>
    </div>
  );
});

/** A run of text in its style: a class for the named colours and text styles, a style for the rest. */
function Styled({ segment }: { segment: MarkedSegment }) {
  const { style } = segment;
  const classes: string[] = [];
  const css: { color?: string; backgroundColor?: string } = {};
  const [fg, bg] = style.inverse ? [style.bg, style.fg] : [style.fg, style.bg];
  if (fg) {
    if ('index' in fg && fg.index < 16) classes.push(`ansi-fg-${fg.index}`);
    else css.color = cssColor(fg);
  } else if (style.inverse) classes.push('ansi-fg-inverse');
  if (bg) {
    if ('index' in bg && bg.index < 16) classes.push(`ansi-bg-${bg.index}`);
    else css.backgroundColor = cssColor(bg);
  } else if (style.inverse) classes.push('ansi-bg-inverse');
  for (const flag of ['bold', 'dim', 'italic', 'underline'] as const)
    if (style[flag]) classes.push(`ansi-${flag}`);
  const props = {
    className: classes.length > 0 ? classes.join(' ') : undefined,
    style: css.color || css.backgroundColor ? css : undefined,
  };
  if (segment.match)
    return (
      <mark {...props} className={['log-match', props.className].filter(Boolean).join(' ')}>
        {segment.text}
      </mark>
    );
  if (!props.className && !props.style) return <>{segment.text}</>;
  return <span {...props}>{segment.text}</span>;
}

/**
 * The whole log as a text file. The download needs the session's Authorization header, which a plain link
 * cannot send: the file is fetched with it and saved from memory.
 */
function LogDownload({ run }: { run: RunData }) {
  const { fetchWithKey } = useSession();
  const [state, setState] = useState<{ busy: boolean; error: unknown }>({ busy: false, error: null });
  const path = `${logPath(run)}.txt`;
  const filename = `run-${run.n}.${run.r}.log`;
  const download = async (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    if (!fetchWithKey || state.busy) return;
    setState({ busy: true, error: null });
    try {
      const res = await fetchWithKey(path);
      if (!res.ok) throw new Error(`the service answered ${res.status} for the log`);
      const url = URL.createObjectURL(await res.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = filename;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setState({ busy: false, error: null });
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  return (
    <span className="log-download">
      <a href={path} download={filename} onClick={(e) => void download(e)} aria-busy={state.busy}>
        Download log
      </a>
      {state.error !== null && <ErrorState error={state.error} title="Could not download the log" />}
    </span>
  );
}
