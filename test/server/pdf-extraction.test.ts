// PDF text extraction at finalize runs off the service's thread, within a time limit.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, runningRun } from '../support/fixtures.ts';
import { makePdf } from '../support/pdf.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { uploadComponents } from '../support/uploads.ts';

/** Hundreds of pages: seconds of pdf.js work, whatever the machine. */
const bigPdf = () =>
  makePdf(
    'Scaling laws, the long version',
    Array.from({ length: 600 }, (_, i) => `Section ${i}: quokkasaurus appears here. `.repeat(60)),
  );

async function uploadPaper(t: TestService, key: string, pdf: Buffer): Promise<string> {
  const created = await t.as(key).post('/assets', {
    presign: true,
    kind: 'paper',
    name: 'Long paper',
    components: [{ name: 'paper.pdf', size: pdf.length, content_type: 'application/pdf' }],
  });
  await uploadComponents(created.body.uploads, { 'paper.pdf': pdf });
  return created.body.id;
}

describe('PDF text extraction in a worker thread', () => {
  let t: TestService;
  let key: string;
  let pdf: Buffer;
  before(async () => {
    t = await startTestService({ listen: true });
    key = t.adminKey;
    pdf = await bigPdf();
  });
  after(() => t.close());

  it('keeps the service answering heartbeats while a big PDF is finalized', async (ctx) => {
    const e = await committedExperiment(t, key);
    const run = await runningRun(t, key, e.id);
    const assetId = await uploadPaper(t, key, pdf);
    // The fraction of time the service's event loop is busy: near 1 when pdf.js runs on it, whatever
    // the speed.
    const before = performance.eventLoopUtilization();
    let finalized = false;
    const finalize = t
      .as(key)
      .put(`/assets/${assetId}/finalize`)
      .finally(() => (finalized = true));
    let beats = 0;
    while (!finalized) {
      assert.equal((await t.as(key).post(`${run.path}/heartbeat`, {})).status, 200);
      beats++;
    }
    const busy = performance.eventLoopUtilization(before).utilization;
    const ready = await finalize;
    assert.equal(ready.body.state, 'ready');
    const found = await t.as(key).get('/search?q=quokkasaurus');
    assert.deepEqual(
      found.body.items.map((i: any) => i.asset_id),
      [assetId],
      'the text was extracted',
    );
    ctx.diagnostic(`${beats} heartbeats, event loop busy ${Math.round(busy * 100)}%`);
    assert.ok(beats >= 10, `${beats} heartbeats answered during the extraction`);
    assert.ok(busy < 0.7, `the service's event loop was busy ${Math.round(busy * 100)}% of the time`);
  });
});

describe('PDF text extraction over its time limit', () => {
  let t: TestService;
  let key: string;
  before(async () => {
    t = await startTestService({ listen: true, env: { ASSAY_TEXT_EXTRACTION_TIMEOUT_S: '0.2' } });
    key = t.adminKey;
  });
  after(() => t.close());

  it('finalizes the asset without its text, promptly, and says so in the log', async () => {
    const assetId = await uploadPaper(t, key, await bigPdf());
    const started = Date.now();
    const ready = await t.as(key).put(`/assets/${assetId}/finalize`);
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body.state, 'ready');
    assert.ok(Date.now() - started < 3000, 'finalize did not wait for the extraction');
    assert.equal((await t.as(key).get('/search?q=quokkasaurus')).body.items.length, 0);
    assert.equal((await t.as(key).get('/search?q=long%20paper')).body.items[0].asset_id, assetId);
    assert.ok(t.logs.some((l) => l.includes('no text extracted') && l.includes('over 200 ms')));
  });
});
