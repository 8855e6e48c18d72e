-- Run metrics: scalar series of (key, step, value) per run. Written in batches of up to 1,000 points, read as one
-- key's series in step order (raw and paged, or downsampled) and as per-key summaries. The repository that keeps
-- these tables consistent is src/server/metrics/metric-repository.ts.

-- One row per (run, key): the series' id, which the points carry instead of the run id and the key (a point row is
-- then 32 bytes of data), and its summary, maintained by the statement that stores each batch, so listing a run's
-- keys or comparing runs never reads points. min and max ignore NaN (NULL while every value is NaN).
CREATE TABLE metric_series (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  last_step bigint,
  last_value float8,
  last_ts timestamptz,
  min_value float8,
  max_value float8,
  UNIQUE (run_id, key)
);

-- The points; (series, step) is unique, so a repeated point overwrites the earlier one. The primary key is also the
-- index that reads one series in step order. No foreign key: a per-row check would cost more than the insert of
-- the point itself, the repository writes points only for series it has just found or created, and runs (thus
-- series) are never deleted.
CREATE TABLE metric_points (
  series_id bigint NOT NULL,
  step bigint NOT NULL,
  value float8 NOT NULL,
  ts timestamptz NOT NULL,
  PRIMARY KEY (series_id, step)
);

-- Each series' steps cut into blocks of 256 (block = step / 256) with the block's point count and its lowest and
-- highest point (NaN ignored): a downsampled read of a long series reads these instead of every point.
CREATE TABLE metric_blocks (
  series_id bigint NOT NULL,
  block bigint NOT NULL,
  count integer NOT NULL,
  min_step bigint,
  min_value float8,
  max_step bigint,
  max_value float8,
  PRIMARY KEY (series_id, block)
);
