import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { migrationUpgrade } from '../support/migration-upgrade.ts';
import { UNDO_MIGRATION_010 } from '../support/search-postings.ts';
import { startTestService, type TestService } from '../support/service.ts';

// Words none of the queries below share a stem with, so only the planted sentences match.
const FILLER = (
  'the model was trained for several epochs on the held out split and we logged the loss every hundred ' +
  'steps while the accuracy on validation kept rising slowly before it levelled off near the end of training ' +
  'batch size and optimiser state were kept fixed across runs to make the comparison fair'
).split(' ');

/** `n` words of neutral research prose, starting at an offset so documents do not read alike. */
function filler(n: number, offset: number): string {
  return Array.from({ length: n }, (_, i) => FILLER[(offset + i * 7) % FILLER.length]).join(' ');
}

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`search ranking on ${driver}: what a person would pick first comes first`, () => {
    let t: TestService;
    let key: string;
    let offset = 0;
    const doc = async (name: string, content: string, metadata: object = {}) => {
      const res = await t.as(key).post('/assets', { kind: 'report', name, content, metadata });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      offset += 3;
    };
    const names = async (q: string) => {
      const res = await t.as(key).get(`/search?q=${encodeURIComponent(q)}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const ranks = res.body.items.map((i: { rank: number }) => i.rank);
      assert.deepEqual(
        ranks,
        [...ranks].sort((a, b) => b - a),
        'ranks are answered best first',
      );
      return res.body.items.map((i: { name: string }) => i.name) as string[];
    };

    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite' });
      key = (await t.createUser()).key;
      // One word. The newest document is created last, so recency never explains the order asserted below.
      await doc('Dropout sweep on the small model', `${filler(60, offset)}. Dropout of 0.1 was best.`);
      await doc('Regularisation notes', filler(120, offset), { tags: ['dropout', 'weight-decay'] });
      await doc('Long training diary', `${filler(400, offset)}. We also tried dropout once.`);
      // Phrase: the exact phrase deep in a long text, against both words early but apart.
      await doc(
        'Run diary',
        `${filler(300, offset)}. Label smoothing helped a little. ${filler(40, offset)}`,
      );
      await doc(
        'Ablations',
        `The label column was noisy. ${filler(30, offset)}. We applied smoothing to the plotted curves. ${filler(200, offset)}`,
      );
      // Several words: all three together, against documents with two or one of them.
      await doc(
        'Stability tricks',
        `${filler(150, offset)}. Gradient clipping with a threshold of one fixed the spikes. ${filler(50, offset)}`,
      );
      await doc(
        'Optimiser notes',
        `Gradient noise was high. ${filler(40, offset)}. Clipping was off. ${filler(150, offset)}`,
      );
      await doc('Early stopping', `The patience threshold was five. ${filler(200, offset)}`);
      // Name match: a document named by the query, against one whose text uses the words.
      await doc('Cosine annealing baseline', `${filler(200, offset)}. Nothing surprising here.`);
      await doc(
        'Scheduler comparison',
        `We compare cosine annealing against a step schedule and the constant baseline. ${filler(200, offset)}. Cosine annealing won.`,
      );
    });
    after(() => t.close());

    it('one word: a name holding it beats a tag, which beats a passing mention deep in a long text', async () => {
      assert.deepEqual(await names('dropout'), [
        'Dropout sweep on the small model',
        'Regularisation notes',
        'Long training diary',
      ]);
    });

    it('phrase: the exact phrase beats the words apart, quoted or not', async () => {
      assert.deepEqual(await names('"label smoothing"'), ['Run diary']);
      assert.deepEqual(await names('label smoothing'), ['Run diary', 'Ablations']);
    });

    it('several words: the document with all of them comes first', async () => {
      assert.deepEqual(await names('gradient clipping threshold'), ['Stability tricks']);
      const any = await names('gradient or clipping or threshold');
      assert.equal(any[0], 'Stability tricks');
      assert.deepEqual([...any].sort(), ['Early stopping', 'Optimiser notes', 'Stability tricks']);
    });

    it('name match: the document named by the query beats one whose text uses its words', async () => {
      assert.deepEqual(await names('cosine annealing baseline'), [
        'Cosine annealing baseline',
        'Scheduler comparison',
      ]);
    });

    it('with more matches than are ranked in full, the name match still comes first', async () => {
      // More than search-repository.ts RANK_CANDIDATES (200), every one newer than the name match.
      await doc('Mixup ablation', `${filler(80, offset)}. Mixup alone did little.`);
      for (let i = 0; i < 210; i++) await doc(`Batch note ${i}`, `Mixup was on. ${filler(20, i)}`);
      const found = await names('mixup');
      assert.equal(found.length, 20);
      assert.equal(found[0], 'Mixup ablation');
    });
  });
}

describe('migration 007 on a database with documents', () => {
  const db = migrationUpgrade();

  it('backfills rank_vector of existing documents, which then rank as new ones do', async () => {
    const t = db.primary;
    const { key } = await t.createUser();
    const post = (name: string, content: string) =>
      t.as(key).post('/assets', { kind: 'report', name, content, metadata: { tags: ['notes'] } });
    await post('Dropout sweep', `${filler(100, 1)}. Dropout of 0.1 was best.`);
    await post('Long training diary', `${filler(400, 2)}. We also tried dropout once.`);
    // Back to the schema before 007 (so before 010 too), with these rows in it, then a service start migrates
    // it again.
    const rows = db.rows;
    const upgraded = await db.reapply(
      `${UNDO_MIGRATION_010}
       ALTER TABLE assets DROP COLUMN rank_vector;
       DELETE FROM schema_migrations WHERE version = '007_search_rank.sql';`,
    );
    assert.deepEqual(
      await rows(
        'SELECT count(*)::int AS n FROM assets WHERE search_vector IS NOT NULL AND rank_vector IS NULL',
      ),
      [{ n: 0 }],
    );
    const res = await upgraded.as(key).get('/search?q=dropout');
    assert.deepEqual(
      res.body.items.map((i: { name: string }) => i.name),
      ['Dropout sweep', 'Long training diary'],
    );
    // The backfill computes what finalize computes: the same document again gets the same vector.
    await upgraded.as(key).post('/assets', {
      kind: 'report',
      name: 'Dropout sweep',
      content: `${filler(100, 1)}. Dropout of 0.1 was best.`,
      metadata: { tags: ['notes'] },
    });
    assert.deepEqual(
      await rows(
        "SELECT count(DISTINCT rank_vector)::int AS n, count(*)::int AS docs FROM assets WHERE name = 'Dropout sweep'",
      ),
      [{ n: 1, docs: 2 }],
    );
  });
});
