// Experiment tags (at create, in any state, as a list filter) and DELETE /experiments/{id}: a draft goes with
// its variations and assets, rows and stored bytes; any other state is kept. On the embedded PGlite and on
// PostgreSQL, with the local store the service serves on a real port.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addVariation, committedExperiment, createExperiment } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { uploadComponents } from '../support/uploads.ts';

for (const backend of ['PGlite', 'PostgreSQL'] as const) {
  describe(`experiment tags and delete (${backend})`, () => {
    let t: TestService;
    let key: string;
    let other: string;

    before(async () => {
      t = await startTestService({ pglite: backend === 'PGlite', listen: true });
      key = (await t.createUser()).key;
      other = (await t.createUser()).key;
    });
    after(() => t?.close());

    it('takes tags at create, filters the list by them (every tag), and changes them in any state', async () => {
      const marker = `m${Date.now()}`;
      const a = await createExperiment(t, key, { name: 'a', tags: [marker, 'vision'] });
      const b = await createExperiment(t, key, { name: 'b', tags: [marker, 'nlp'] });
      await createExperiment(t, key, { name: 'c' });
      assert.deepEqual((await t.as(key).get(`/experiments/${a.id}`)).body.tags, [marker, 'vision']);
      const names = async (q: string) => {
        const res = await t.as(key).get(`/experiments?limit=200&${q}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        return res.body.items.map((e: { name: string }) => e.name);
      };
      assert.deepEqual(await names(`tag=${marker}`), ['b', 'a']);
      assert.deepEqual(await names(`tag=${marker},nlp`), ['b'], 'every tag must match');
      assert.deepEqual(await names(`tag=${marker},nlp,vision`), []);
      assert.deepEqual(await names(`tag=${marker}&state=committed`), []);
      const bad = await t.as(key).get(`/experiments?tag=${'x'.repeat(65)}`);
      assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_parameter']);
      const badBody = await t.as(key).post('/experiments', { name: 'd', tags: ['a,b'] });
      assert.deepEqual([badBody.status, badBody.body.error.code], [422, 'validation_failed']);

      // Committed: tags alone change; anything else is still draft-only.
      await addVariation(t, key, b.id);
      assert.equal((await t.as(key).post(`/experiments/${b.id}/commit`)).status, 200);
      const retagged = await t.as(key).patch(`/experiments/${b.id}`, { tags: [marker, 'nlp', 'final'] });
      assert.equal(retagged.status, 200, JSON.stringify(retagged.body));
      assert.deepEqual(retagged.body.tags, [marker, 'nlp', 'final']);
      const mixed = await t.as(key).patch(`/experiments/${b.id}`, { tags: ['x'], name: 'renamed' });
      assert.deepEqual([mixed.status, mixed.body.error.code], [409, 'experiment_not_draft']);
      assert.deepEqual(await names(`tag=final`), ['b']);
      // A draft takes tags with its other fields.
      const both = await t.as(key).patch(`/experiments/${a.id}`, { tags: [], description: 'untagged' });
      assert.deepEqual([both.status, both.body.tags, both.body.description], [200, [], 'untagged']);
      const theirs = await t.as(other).patch(`/experiments/${b.id}`, { tags: ['mine'] });
      assert.equal(theirs.status, 404);
    });

    it('deletes a draft with its variations and assets, stored bytes included (204, no body)', async () => {
      const draft = await createExperiment(t, key, { name: 'scratch', tags: ['tmp'] });
      await addVariation(t, key, draft.id, 'lr: 0.1\n');
      await addVariation(t, key, draft.id, 'lr: 0.2\n');
      // A ready asset (its bytes in the store), and a pending one whose upload was sent but never finalized.
      const ready = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'notes',
        experiment_id: draft.id,
        components: [{ name: 'a.txt', size: 5 }],
      });
      assert.equal(ready.status, 201, JSON.stringify(ready.body));
      await uploadComponents(ready.body.uploads, { 'a.txt': Buffer.from('hello') });
      assert.equal((await t.as(key).put(`/assets/${ready.body.id}/finalize`)).status, 200);
      const download = (await t.as(key).get(`/assets/${ready.body.id}/download`)).body;
      const url: string = download.components['a.txt'].url;
      assert.equal(await (await fetch(url)).text(), 'hello');
      const pending = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'half',
        experiment_id: draft.id,
        components: [{ name: 'b.bin', size: 3 }],
      });
      await uploadComponents(pending.body.uploads, { 'b.bin': Buffer.from('abc') });
      const inline = await t.as(key).post('/assets', {
        kind: 'report',
        name: 'inline',
        experiment_id: draft.id,
        content: 'inline text',
      });
      assert.equal(inline.status, 201);

      // Not someone else's to delete, and not with a worker-less read key either.
      assert.equal((await t.as(other).delete(`/experiments/${draft.id}`)).status, 404);
      const reader = await t.as(key).post('/api-keys', { description: 'read', scopes: ['experiments:read'] });
      const readOnly = await t.as(reader.body.key).delete(`/experiments/${draft.id}`);
      assert.deepEqual([readOnly.status, readOnly.body.error.code], [403, 'insufficient_scope']);

      const gone = await t.as(key).delete(`/experiments/${draft.id}`);
      assert.equal(gone.status, 204, JSON.stringify(gone.body));
      assert.equal(gone.body, undefined, 'no body');
      assert.equal((await t.as(key).get(`/experiments/${draft.id}`)).status, 404);
      assert.equal((await t.as(key).get(`/experiments/${draft.id}/variations/1`)).status, 404);
      for (const id of [ready.body.id, pending.body.id, inline.body.id])
        assert.equal((await t.as(key).get(`/assets/${id}`)).status, 404, `asset ${id}`);
      assert.equal((await t.as(key).get(`/assets?experiment_id=${draft.id}`)).body.items.length, 0);
      // The signed URL is still valid; what it named is no longer in the store.
      assert.equal((await fetch(url)).status, 404, 'the stored bytes are gone');
      // A presigned upload still in hand writes nothing for an asset that is gone.
      const late = await fetch(pending.body.uploads['b.bin'].url, {
        method: 'PUT',
        headers: pending.body.uploads['b.bin'].headers,
        body: 'abc',
      });
      assert.equal(late.status, 409);
      assert.equal((await t.as(key).delete(`/experiments/${draft.id}`)).status, 404, 'a second delete');
      assert.deepEqual((await t.as(key).get('/experiments?tag=tmp')).body.items, []);
    });

    it('keeps what is not a draft (409 experiment_not_draft) and a draft another experiment descends from', async () => {
      const committed = await committedExperiment(t, key);
      const run = await t.as(key).post(`/experiments/${committed.id}/variations/1/runs`);
      assert.equal(run.status, 201);
      const refused = await t.as(key).delete(`/experiments/${committed.id}`);
      assert.deepEqual(
        [refused.status, refused.body.error.code, refused.body.error.details.state],
        [409, 'experiment_not_draft', 'committed'],
      );
      await t.as(key).post(`/experiments/${committed.id}/conclude`);
      const concluded = await t.as(key).delete(`/experiments/${committed.id}`);
      assert.deepEqual([concluded.status, concluded.body.error.code], [409, 'experiment_not_draft']);
      const detail = await t.as(key).get(`/experiments/${committed.id}`);
      assert.deepEqual([detail.status, detail.body.run_counts.pending], [200, 1], 'kept whole');

      const parent = await createExperiment(t, key, { name: 'parent draft' });
      const child = await createExperiment(t, key, { name: 'child', parent_ids: [parent.id] });
      const kept = await t.as(key).delete(`/experiments/${parent.id}`);
      assert.deepEqual(
        [kept.status, kept.body.error.code, kept.body.error.details.children],
        [409, 'experiment_has_children', 1],
      );
      assert.equal((await t.as(key).delete(`/experiments/${child.id}`)).status, 204);
      assert.equal(
        (await t.as(key).delete(`/experiments/${parent.id}`)).status,
        204,
        'once the child is gone',
      );
    });
  });
}
