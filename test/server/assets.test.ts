import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { committedExperiment, createExperiment, runningRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { uploadComponents } from '../support/uploads.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const backend of ['local', 's3'] as const) {
  describe(`assets on the ${backend} backend`, () => {
    let t: TestService;
    let key: string;
    before(async () => {
      t = await startTestService({ storage: backend });
      key = (await t.createUser()).key;
    });
    after(() => t.close());

    it('uploads in three steps: presign, PUT each component, finalize; sizes 0, 1 byte and 50 MiB', async () => {
      const e = await createExperiment(t, key);
      const files = { empty: Buffer.alloc(0), one: Buffer.from('x'), big: randomBytes(50 * 1024 * 1024) };
      const created = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'three sizes',
        experiment_id: e.id,
        components: Object.entries(files).map(([name, b]) => ({
          name,
          size: b.length,
          sha256: sha(b),
          content_type: 'application/octet-stream',
        })),
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.state, 'pending');
      assert.deepEqual(Object.keys(created.body.uploads).sort(), ['big', 'empty', 'one']);
      await uploadComponents(created.body.uploads, files);
      const ready = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.equal(ready.status, 200, JSON.stringify(ready.body));
      assert.equal(ready.body.state, 'ready');
      assert.notEqual(ready.body.finalized_at, null);
      const download = await t.as(key).get(`/assets/${created.body.id}/download`);
      for (const [name, bytes] of Object.entries(files)) {
        const got = Buffer.from(
          await (
            await fetch(download.body.components[name].url, {
              headers: download.body.components[name].headers,
            })
          ).arrayBuffer(),
        );
        assert.equal(sha(got), sha(bytes), `${name} comes back as uploaded`);
      }
      // Finalize twice: the same answer, nothing changed.
      const again = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.deepEqual(again.body, ready.body);
    });

    it('handles many components in one asset', async () => {
      const files = Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [
          `shard-${String(i).padStart(3, '0')}.bin`,
          randomBytes(1000 + i),
        ]),
      );
      const created = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'shards',
        components: Object.entries(files).map(([name, b]) => ({ name, size: b.length })),
      });
      assert.equal(created.status, 201);
      await uploadComponents(created.body.uploads, files);
      const ready = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.equal(ready.body.state, 'ready');
      assert.equal(Object.keys(ready.body.components).length, 40);
    });

    it('refuses finalize with a missing, short or corrupted component (409 naming it) and stays pending', async () => {
      const good = Buffer.from('good bytes');
      const created = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'broken',
        components: [
          { name: 'a', size: good.length, sha256: sha(good) },
          { name: 'b', size: 5 },
        ],
      });
      const missing = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.equal(missing.status, 409);
      assert.equal(missing.body.error.code, 'component_missing');
      assert.equal(missing.body.error.details.component, 'a');
      await uploadComponents(created.body.uploads, { a: good, b: Buffer.from('12345') });
      // Corrupt `a` by re-uploading other bytes of the same size through a fresh URL: SeaweedFS verifies the
      // checksum signed into the URL and refuses them; the local backend takes them and finalize refuses.
      const fresh = (await t.as(key).post(`/assets/${created.body.id}/presign`, { components: ['a'] })).body
        .uploads.a;
      const evil = await fetch(fresh.url, { method: 'PUT', headers: fresh.headers, body: 'evil bytes' });
      if (backend === 's3') {
        assert.equal(evil.status, 400);
        assert.match(await evil.text(), /BadDigest/);
      } else {
        assert.equal(evil.status, 200);
        const corrupted = await t.as(key).put(`/assets/${created.body.id}/finalize`);
        assert.equal(corrupted.status, 409);
        assert.equal(corrupted.body.error.code, 'component_checksum_mismatch');
        assert.equal((await t.as(key).get(`/assets/${created.body.id}`)).body.state, 'pending');
      }
      await uploadComponents(
        (await t.as(key).post(`/assets/${created.body.id}/presign`, { components: ['a'] })).body.uploads,
        { a: good },
      );
      assert.equal((await t.as(key).put(`/assets/${created.body.id}/finalize`)).body.state, 'ready');
    });

    it('refuses a body of another size than declared, at the store', async () => {
      const created = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'sized',
        components: [{ name: 'f', size: 10 }],
      });
      const target = created.body.uploads.f;
      const res = await fetch(target.url, {
        method: 'PUT',
        headers: { ...target.headers, 'content-length': '11' },
        body: Buffer.alloc(11),
      });
      assert.ok(res.status >= 400 && res.status < 500, `status ${res.status}`);
      const finalize = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.equal(finalize.status, 409);
    });

    it('keeps ready assets immutable: no new upload URLs (409)', async () => {
      const created = await t.as(key).post('/assets', { kind: 'report', name: 'notes', content: '# Notes' });
      const res = await t.as(key).post(`/assets/${created.body.id}/presign`, {});
      assert.equal(res.status, 409);
      assert.equal(res.body.error.code, 'asset_ready');
    });

    it('keeps ready assets immutable: an upload URL still valid after finalize changes no byte a download returns', async () => {
      const original = Buffer.from('the reviewed model weights');
      const forged = Buffer.from('a swapped-in model weights');
      assert.equal(forged.length, original.length);
      const created = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'immutable',
        components: [{ name: 'model.bin', size: original.length }],
      });
      await uploadComponents(created.body.uploads, { 'model.bin': original });
      const ready = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.equal(ready.body.state, 'ready', JSON.stringify(ready.body));
      const target = created.body.uploads['model.bin'];
      const late = await fetch(target.url, { method: 'PUT', headers: target.headers, body: forged });
      // The local store refuses outright; an S3 store takes the bytes into the upload key, which
      // nothing reads.
      if (backend === 'local') {
        assert.equal(late.status, 409);
        assert.equal(((await late.json()) as any).error.code, 'asset_ready');
      } else assert.equal(late.status, 200, await late.text());
      const download = await t.as(key).get(`/assets/${created.body.id}/download`);
      const got = await fetch(download.body.components['model.bin'].url);
      assert.deepEqual(Buffer.from(await got.arrayBuffer()), original);
      const again = await t.as(key).put(`/assets/${created.body.id}/finalize`);
      assert.deepEqual(again.body, ready.body);
    });

    it('finalizes inline assets at once and refuses them over the inline cap (400)', async () => {
      const e = await committedExperiment(t, key);
      const run = await runningRun(t, key, e.id);
      const env = await t.as(key).post('/assets', {
        kind: 'environment',
        name: 'env',
        content_json: { os: 'linux', gpus: [] },
        run: { experiment_id: e.id, n: 1, r: run.r },
      });
      assert.equal(env.status, 201);
      assert.equal(env.body.state, 'ready');
      assert.equal(env.body.run_id, run.id);
      assert.equal(env.body.components.content.content_type, 'application/json');
      const d = await t.as(key).get(`/assets/${env.body.id}/download`);
      assert.deepEqual(await (await fetch(d.body.components.content.url)).json(), { os: 'linux', gpus: [] });
      const big = await t
        .as(key)
        .post('/assets', { kind: 'report', name: 'too big', content: 'x'.repeat(300 * 1024) });
      assert.equal(big.status, 400);
      assert.equal(big.body.error.code, 'inline_too_large');
    });

    it('keeps assets to their tenant: another user gets 404 everywhere and sees none in lists', async () => {
      const e = await createExperiment(t, key);
      const pending = await t.as(key).post('/assets', {
        presign: true,
        kind: 'output',
        name: 'private',
        experiment_id: e.id,
        components: [{ name: 'f', size: 1 }],
      });
      const ready = await t
        .as(key)
        .post('/assets', { kind: 'report', name: 'private report', content: 'secret', experiment_id: e.id });
      const other = (await t.createUser()).key;
      for (const id of [pending.body.id, ready.body.id]) {
        assert.equal((await t.as(other).get(`/assets/${id}`)).status, 404);
        assert.equal((await t.as(other).get(`/assets/${id}/download`)).status, 404);
        assert.equal((await t.as(other).put(`/assets/${id}/finalize`)).status, 404);
        assert.equal((await t.as(other).post(`/assets/${id}/presign`, {})).status, 404);
      }
      assert.equal((await t.as(other).get('/assets?limit=200')).body.items.length, 0);
      assert.equal((await t.as(other).get(`/assets?experiment_id=${e.id}`)).body.items.length, 0);
      const linked = await t
        .as(other)
        .post('/assets', { kind: 'report', name: 'x', content: 'y', experiment_id: e.id });
      assert.equal(linked.status, 404, 'cannot attach an asset to a foreign experiment');
    });

    it("lists by experiment, run, kind and name, and serves the newest checkpoint of a run's chain", async () => {
      const e = await committedExperiment(t, key);
      const first = await runningRun(t, key, e.id);
      const second = await runningRun(t, key, e.id);
      assert.equal((await t.as(key).get(`${first.path}/checkpoint`)).status, 404);
      const checkpoint = async (r: number, body: string) => {
        const c = await t.as(key).post('/assets', {
          presign: true,
          kind: 'checkpoint',
          name: `step ${body}`,
          run: { experiment_id: e.id, n: 1, r },
          components: [{ name: 'model.pt', size: body.length }],
        });
        await uploadComponents(c.body.uploads, { 'model.pt': Buffer.from(body) });
        await t.as(key).put(`/assets/${c.body.id}/finalize`);
        return c.body.id as string;
      };
      await checkpoint(first.r, 'step-100');
      const newest = await checkpoint(first.r, 'step-200');
      // Another run of the variation starts from scratch; one created to resume from the first gets its newest.
      assert.equal((await t.as(key).get(`${second.path}/checkpoint`)).status, 404);
      const resumed = await t
        .as(key)
        .post(`/experiments/${e.id}/variations/1/runs`, { resume_from: { r: first.r } });
      assert.equal(resumed.status, 201, JSON.stringify(resumed.body));
      const got = await t.as(key).get(`/experiments/${e.id}/variations/1/runs/${resumed.body.r}/checkpoint`);
      assert.equal(got.status, 200);
      assert.equal(got.body.asset.id, newest);
      assert.equal(await (await fetch(got.body.download.components['model.pt'].url)).text(), 'step-200');
      const byRun = await t.as(key).get(`/assets?experiment_id=${e.id}&n=1&r=${first.r}`);
      assert.equal(byRun.body.items.length, 2);
      assert.equal((await t.as(key).get(`/assets?experiment_id=${e.id}&kind=report`)).body.items.length, 0);
      const byName = await t
        .as(key)
        .get(`/assets?experiment_id=${e.id}&name=${encodeURIComponent('step step-100')}`);
      assert.deepEqual(
        byName.body.items.map((a: { name: string }) => a.name),
        ['step step-100'],
      );
      assert.equal((await t.as(key).get(`/assets?experiment_id=${e.id}&name=step`)).body.items.length, 0);
      assert.equal((await t.as(key).get(`/assets?name=`)).status, 400);
    });
  });
}
