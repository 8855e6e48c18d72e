import {
  lazy,
  Suspense,
  useLayoutEffect,
  useRef,
  useState,
  type ComponentProps,
  type RefObject,
} from 'react';

// The chart library is loaded with the first chart, not with the app: most pages draw none.
const loadChart = () => import('./metric-chart.tsx');
const MetricChart = lazy(loadChart);

/** Starts loading the chart code now, for a page that will draw once its data arrives. */
export function preloadChart(): void {
  void loadChart();
}

/** A chart, once its code has loaded. */
export function Chart(props: ComponentProps<typeof MetricChart>) {
  return (
    <Suspense fallback={<div className="chart chart-loading" aria-busy="true" />}>
      <MetricChart {...props} />
    </Suspense>
  );
}

/** The content width of an element, kept up to date as it resizes; 0 before the first layout. */
export function useWidth<T extends HTMLElement>(): [RefObject<T | null>, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(Math.floor(el.clientWidth));
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.floor(entry.contentRect.width));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

export interface ChartSettings {
  log: boolean;
  /** The moving average's weight, 0 (raw) to 0.99. */
  smoothing: number;
}

/** The log-scale toggle and the smoothing slider that every chart of a page follows. */
export function ChartControls({
  settings,
  onChange,
}: {
  settings: ChartSettings;
  onChange: (next: ChartSettings) => void;
}) {
  return (
    <div className="filters chart-controls">
      <label className="inline">
        <input
          type="checkbox"
          checked={settings.log}
          onChange={(e) => onChange({ ...settings, log: e.target.checked })}
        />
        <span>Log scale</span>
      </label>
      <label className="inline">
        <span>Smoothing</span>
        <input
          type="range"
          min={0}
          max={0.99}
          step={0.01}
          value={settings.smoothing}
          onChange={(e) => onChange({ ...settings, smoothing: Number(e.target.value) })}
        />
        <output className="smoothing-value">{settings.smoothing.toFixed(2)}</output>
      </label>
      <span className="hint">Drag across a chart to zoom into those steps; double-click to zoom out.</span>
    </div>
  );
}
