-- A second, finer level of metric_blocks (006_metrics.sql): each series' steps cut into blocks of 16 (block =
-- step / 16), with the block's point count and its lowest and highest point (NaN ignored). A downsampled read of
-- a series of tens of thousands of steps, too short for the 256-step blocks to serve its buckets, reads these
-- instead of every point: a 500-point curve of 10,000 steps is about 1,250 block extremes instead of 10,000 points,
-- which is what a comparison of a hundred runs spends its first read on. Kept by the same statement that stores
-- each batch, and by the recomputation after overwrites (src/server/metrics/metric-repository.ts).

-- The same columns and primary key as metric_blocks: the repository writes and reads both levels with one text.
CREATE TABLE metric_fine_blocks (LIKE metric_blocks INCLUDING ALL);

-- The points stored before this migration. The extremes as the repository computes them: the lowest (highest)
-- non-NaN value, on a tie the lowest step; NaN = NaN in PostgreSQL's float order, so `<> 'NaN'` leaves out exactly
-- the NaN values.
INSERT INTO metric_fine_blocks (series_id, block, count, min_step, min_value, max_step, max_value)
SELECT series_id, step / 16, count(*),
       (array_agg(step ORDER BY value, step) FILTER (WHERE value <> 'NaN'))[1],
       min(value) FILTER (WHERE value <> 'NaN'),
       (array_agg(step ORDER BY value DESC, step) FILTER (WHERE value <> 'NaN'))[1],
       max(value) FILTER (WHERE value <> 'NaN')
  FROM metric_points
 GROUP BY series_id, step / 16;
