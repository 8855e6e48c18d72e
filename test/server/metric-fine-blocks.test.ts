import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { migrationUpgrade } from '../support/migration-upgrade.ts';
import type { TestService } from '../support/service.ts';

// Migration 011_metric_fine_blocks.sql adds the 16-step blocks to a database that already holds points. Its
// backfill must leave exactly the rows the write path would have kept, or downsampled reads of old series
// would differ from new ones.

const UNDO_MIGRATION_011 = `DROP TABLE metric_fine_blocks;
  DELETE FROM schema_migrations WHERE version = '011_metric_fine_blocks.sql'`;

describe('migration 011 on a database with metric points', () => {
  const db = migrationUpgrade();

  it('backfills the 16-step blocks that storing the points kept', async () => {
    const t = db.primary;
    const key = (await t.createUser()).key;
    const experiment = await committedExperiment(t, key);
    const run = await runningRun(t, key, experiment.id);
    const log = async (metrics: { key: string; step: number; value: number | string }[]) => {
      const res = await t.as(key).post(`${run.path}/metrics`, { metrics });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    const wave = (s: number) => Math.sin(s / 7) + (s % 5) / 10;
    // Appends in step order, a stretch of NaN alone (blocks with no extremes), NaN mixed with numbers,
    // ±Infinity, sparse steps, and overwrites that remove a block's extremes.
    for (let from = 0; from < 2000; from += 500)
      await log(
        Array.from({ length: 500 }, (_, i) => {
          const step = from + i;
          const value = step >= 800 && step < 880 ? 'NaN' : step % 97 === 0 ? 'NaN' : wave(step);
          return { key: 'loss', step, value };
        }),
      );
    await log([
      { key: 'loss', step: 2000, value: 'Infinity' },
      { key: 'loss', step: 2001, value: '-Infinity' },
      ...Array.from({ length: 40 }, (_, i) => ({ key: 'sparse', step: i * 100, value: i })),
    ]);
    await log([
      { key: 'loss', step: 33, value: 0 },
      { key: 'loss', step: 34, value: 'NaN' },
      { key: 'loss', step: 1500, value: 50 },
    ]);

    const blocks = () =>
      db.rows(`SELECT s.key, b.block::int, b.count, b.min_step::int, b.min_value, b.max_step::int, b.max_value
              FROM metric_fine_blocks b JOIN metric_series s ON s.id = b.series_id ORDER BY s.key, b.block`);
    const curve = async (api: TestService) =>
      (await api.as(key).get(`${run.path}/metrics/loss?max_points=100`)).body;
    const written = await blocks();
    assert.equal(written.filter((b) => b.key === 'loss').length, Math.ceil(2002 / 16));
    assert.equal(written.filter((b) => b.key === 'sparse').length, 40);
    assert.ok(
      written.some((b) => b.min_step === null && b.count === 16),
      'a block of NaN alone',
    );
    const before = await curve(t);
    const upgraded = await db.reapply(UNDO_MIGRATION_011);
    assert.deepEqual(await blocks(), written);
    assert.deepEqual(await curve(upgraded), before);
  });
});
