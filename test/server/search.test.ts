import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makePdf } from '../support/pdf.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { uploadComponents } from '../support/uploads.ts';

describe('full-text search', () => {
  let t: TestService;
  let key: string;
  let paperId: string;
  before(async () => {
    t = await startTestService({ listen: true });
    key = (await t.createUser()).key;
    const report = (name: string, content: string, metadata = {}) =>
      t.as(key).post('/assets', { kind: 'report', name, content, metadata });
    await report(
      'Warmup schedules for transformer training',
      'Linear warmup of the learning rate stabilises early training. Warmup length matters.',
    );
    await report('Weight decay ablation', 'We vary weight decay; a short warmup was used throughout.');
    await report('Tokenizer notes', 'Byte-pair encoding merges; nothing about schedules here.', {
      tags: ['vocabulary', 'bpe'],
    });
    await t
      .as(key)
      .post('/assets', { kind: 'output', name: 'warmup curves', content: 'warmup warmup warmup' });
    const pdf = await makePdf('Rotary embeddings revisited', [
      'Rotary position embeddings rotate query and key vectors.',
      'Extrapolation beyond the trained context length degrades gracefully.',
    ]);
    const created = await t.as(key).post('/assets', {
      presign: true,
      kind: 'paper',
      name: 'RoPE paper',
      components: [{ name: 'paper.pdf', size: pdf.length, content_type: 'application/pdf' }],
    });
    await uploadComponents(created.body.uploads, { 'paper.pdf': pdf });
    const ready = await t.as(key).put(`/assets/${created.body.id}/finalize`);
    assert.equal(ready.body.state, 'ready');
    paperId = created.body.id;
  });
  after(() => t.close());

  const search = async (q: string, extra = '', who = key) =>
    (await t.as(who).get(`/search?q=${encodeURIComponent(q)}${extra}`)).body;

  it('ranks a title match above a passing mention, and leaves out assets that are not documents', async () => {
    const res = await search('warmup');
    assert.deepEqual(
      res.items.map((i: any) => i.name),
      ['Warmup schedules for transformer training', 'Weight decay ablation'],
    );
    assert.ok(res.items[0].rank > res.items[1].rank);
    assert.match(res.items[0].snippet, /<mark>[Ww]armup<\/mark>/);
  });

  it('understands phrases and exclusions (websearch syntax)', async () => {
    assert.deepEqual(
      (await search('"learning rate"')).items.map((i: any) => i.name),
      ['Warmup schedules for transformer training'],
    );
    assert.deepEqual(
      (await search('warmup -decay')).items.map((i: any) => i.name),
      ['Warmup schedules for transformer training'],
    );
    assert.equal((await search('"rate learning"')).items.length, 0);
  });

  it('finds text extracted from a real PDF paper, and searches metadata', async () => {
    const res = await search('extrapolation context');
    assert.deepEqual(
      res.items.map((i: any) => i.asset_id),
      [paperId],
    );
    assert.match(res.items[0].snippet, /<mark>Extrapolation<\/mark>/);
    assert.equal((await search('vocabulary')).items[0]?.name, 'Tokenizer notes');
    assert.equal((await search('rotary', '&kind=report')).items.length, 0);
    assert.equal((await search('rotary', '&kind=paper')).items.length, 1);
  });

  it("never returns another tenant's documents", async () => {
    const other = (await t.createUser()).key;
    assert.equal((await search('warmup', '', other)).items.length, 0);
    assert.equal((await search('rotary', '', other)).items.length, 0);
  });

  it('treats odd queries as text, never as an error', async () => {
    for (const q of ['&|!', "o'reilly", '"unterminated', 'a:*', '(', '-', '\\']) {
      const res = await t.as(key).get(`/search?q=${encodeURIComponent(q)}`);
      assert.equal(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
    }
  });
});

describe('search turned off', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ env: { ASSAY_SEARCH: 'off' } });
  });
  after(() => t.close());

  it('answers 503 search_unavailable', async () => {
    const res = await t.as(t.adminKey).get('/search?q=anything');
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'search_unavailable');
  });
});
