// A wrong byte never becomes ready, whether the store verifies the signed checksums on upload (SeaweedFS),
// finalize reads the bytes back (ASSAY_S3_CHECKSUMS=off, a store that ignores checksums), or the local
// backend compares the digest it took while writing.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { Client, UploadError } from '../../src/client/index.ts';
import { requests } from '../support/request-log.ts';
import { downloadedDigests, randomFile } from '../support/upload-files.ts';
import { startTestService, type TestService } from '../support/service.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MIB = 1024 * 1024;
const PART = 5 * MIB; // S3's smallest part

/** A declaration with the part layout and part checksums a client gives for a file in parts. */
function inParts(name: string, bytes: Buffer) {
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += PART) parts.push(sha(bytes.subarray(at, at + PART)));
  return { name, size: bytes.length, sha256: sha(bytes), part_size: PART, part_sha256: parts };
}

const partBytes = (bytes: Buffer, n: number) => bytes.subarray((n - 1) * PART, n * PART);

async function put(target: { url: string; method: string; headers: Record<string, string> }, body: Buffer) {
  const res = await fetch(target.url, { method: target.method, headers: target.headers, body });
  return { status: res.status, text: await res.text() };
}

const localDir = await mkdtemp(path.join(tmpdir(), 'assay-checksums-'));
after(() => rm(localDir, { recursive: true, force: true }));

const backends = [
  { name: 'local', storage: 'local', env: { ASSAY_STORAGE_DIR: localDir }, verifies: false },
  { name: 's3 (SeaweedFS)', storage: 's3', env: {}, verifies: true },
  {
    name: 's3 with ASSAY_S3_CHECKSUMS=off',
    storage: 's3',
    env: { ASSAY_S3_CHECKSUMS: 'off' },
    verifies: false,
  },
] as const;

for (const backend of backends) {
  describe(`upload checksums on ${backend.name}`, () => {
    let t: TestService;
    let key: string;
    before(async () => {
      // Components over one S3 part go in parts of one S3 part when the client names no layout
      // (deferred ones).
      t = await startTestService({
        storage: backend.storage,
        env: {
          ...backend.env,
          ASSAY_MULTIPART_THRESHOLD_BYTES: String(PART),
          ASSAY_MULTIPART_PART_BYTES: String(PART),
        },
      });
      key = (await t.createUser()).key;
    });
    after(() => t.close());

    const create = async (components: object[]) => {
      const res = await t
        .as(key)
        .post('/assets', { presign: true, kind: 'output', name: 'sums', components });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body;
    };
    const finalize = (id: string) => t.as(key).put(`/assets/${id}/finalize`);
    const stateOf = async (id: string) => (await t.as(key).get(`/assets/${id}`)).body.state;

    it('uploads a single PUT and a component in the declared parts, and finalizes them', async () => {
      const small = randomBytes(3000);
      const big = randomBytes(2 * PART + 1234);
      const created = await create([
        { name: 'small', size: small.length, sha256: sha(small) },
        inParts('big', big),
      ]);
      const single = created.uploads.small;
      const parts = created.uploads.big;
      assert.equal(parts.multipart, true, 'declared part checksums make the component go in parts');
      assert.equal(parts.part_size, PART);
      assert.equal(parts.parts.length, 3);
      const checksum = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
      if (backend.verifies) {
        assert.equal(single.headers['x-amz-checksum-sha256'], checksum(sha(small)));
        assert.equal(parts.parts[1].headers['x-amz-checksum-sha256'], checksum(sha(partBytes(big, 2))));
      } else {
        assert.equal(single.headers['x-amz-checksum-sha256'], undefined);
      }
      assert.equal((await put(single, small)).status, 200);
      for (const p of parts.parts) assert.equal((await put(p, partBytes(big, p.part_number))).status, 200);
      const ready = await finalize(created.id);
      assert.equal(ready.status, 200, JSON.stringify(ready.body));
      assert.equal(ready.body.state, 'ready');
      assert.equal(ready.body.components.big.sha256, sha(big));
      const download = (await t.as(key).get(`/assets/${created.id}/download`)).body.components.big;
      const got = Buffer.from(await (await fetch(download.url, { headers: download.headers })).arrayBuffer());
      assert.equal(sha(got), sha(big));
      if (backend.storage === 's3') {
        const probed = t.logs.some((l) => l.includes('object store verifies sha256 on upload'));
        assert.equal(probed, backend.verifies, 'the service says whether the store verifies checksums');
      }
    });

    it('never makes a wrongly uploaded single PUT ready', async () => {
      const good = Buffer.from('the bytes that were hashed');
      const evil = Buffer.from('the bytes that were forged');
      assert.equal(evil.length, good.length);
      const created = await create([{ name: 'f', size: good.length, sha256: sha(good) }]);
      const res = await put(created.uploads.f, evil);
      const refused = await finalize(created.id);
      assert.equal(refused.status, 409);
      if (backend.verifies) {
        // The store refuses the body at once, so nothing was stored.
        assert.equal(res.status, 400);
        assert.match(res.text, /BadDigest/);
        assert.equal(refused.body.error.code, 'component_missing');
      } else {
        assert.equal(res.status, 200);
        assert.equal(refused.body.error.code, 'component_checksum_mismatch');
        assert.equal(refused.body.error.details.stored, sha(evil), 'finalize read the bytes back');
      }
      assert.equal(await stateOf(created.id), 'pending');
      const fresh = await t.as(key).post(`/assets/${created.id}/presign`, { components: ['f'] });
      assert.equal((await put(fresh.body.uploads.f, good)).status, 200);
      assert.equal((await finalize(created.id)).body.state, 'ready');
    });

    it('never makes a component with a corrupted part ready', async () => {
      const big = randomBytes(2 * PART + 10);
      const created = await create([inParts('big', big)]);
      const target = created.uploads.big;
      const corrupted = Buffer.from(partBytes(big, 2));
      corrupted[12345] = corrupted[12345]! ^ 1;
      const results = [];
      for (const p of target.parts)
        results.push(await put(p, p.part_number === 2 ? corrupted : partBytes(big, p.part_number)));
      const refused = await finalize(created.id);
      assert.equal(refused.status, 409);
      assert.equal(await stateOf(created.id), 'pending');
      if (backend.verifies) {
        assert.equal(results[1]!.status, 400);
        assert.match(results[1]!.text, /BadDigest/);
        assert.equal(refused.body.error.code, 'component_incomplete');
        assert.deepEqual(refused.body.error.details.missing_parts, [2]);
        // The upload goes on: the right part 2, and the component is complete.
        assert.equal((await put(target.parts[1], partBytes(big, 2))).status, 200);
        assert.equal((await finalize(created.id)).body.state, 'ready');
      } else {
        assert.ok(results.every((r) => r.status === 200));
        assert.equal(refused.body.error.code, 'component_checksum_mismatch');
      }
    });

    const createDeferred = async (components: object[]) => {
      const res = await t.as(key).post('/assets', {
        presign: true,
        deferred_checksums: true,
        kind: 'output',
        name: 'deferred',
        components,
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body;
    };
    const declare = (id: string, components: object[]) =>
      t.as(key).post(`/assets/${id}/checksums`, { components });
    const partDigests = (bytes: Buffer) =>
      Array.from({ length: Math.ceil(bytes.length / PART) }, (_, i) => ({
        part_number: i + 1,
        sha256: sha(partBytes(bytes, i + 1)),
      }));

    it('deferred checksums: each digest declared later answers its URL, with the digest signed in', async () => {
      const small = randomBytes(3000);
      const big = randomBytes(2 * PART + 77);
      const created = await createDeferred([
        { name: 'small', size: small.length },
        { name: 'big', size: big.length, part_size: PART },
      ]);
      assert.equal(created.uploads.small, undefined, 'no URL before the digest is declared');
      assert.equal(created.uploads.big.multipart, true);
      assert.equal(created.uploads.big.part_size, PART);
      assert.deepEqual(created.uploads.big.parts, []);
      const checksum = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
      // Part 1 first, alone: a client declares each part as soon as it has read it.
      const [p1, p2, p3] = partDigests(big);
      const first = await declare(created.id, [{ name: 'big', parts: [p1] }]);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(
        first.body.uploads.big.parts.map((p: { part_number: number }) => p.part_number),
        [1],
      );
      const rest = await declare(created.id, [
        { name: 'small', sha256: sha(small) },
        { name: 'big', sha256: sha(big), parts: [p2, p3] },
      ]);
      assert.equal(rest.status, 200, JSON.stringify(rest.body));
      const single = rest.body.uploads.small;
      const parts = [first.body.uploads.big.parts[0], ...rest.body.uploads.big.parts];
      if (backend.verifies) {
        assert.equal(single.headers['x-amz-checksum-sha256'], checksum(sha(small)));
        assert.equal(parts[2].headers['x-amz-checksum-sha256'], checksum(p3!.sha256));
      } else {
        assert.equal(single.headers['x-amz-checksum-sha256'], undefined);
      }
      assert.equal((await put(single, small)).status, 200);
      for (const p of parts) assert.equal((await put(p, partBytes(big, p.part_number))).status, 200);
      // The same digest again is fine (a resumed client asks for fresh URLs so); another one is refused.
      const again = await declare(created.id, [{ name: 'small', sha256: sha(small) }]);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      const clash = await declare(created.id, [
        { name: 'big', parts: [{ part_number: 2, sha256: p1!.sha256 }] },
      ]);
      if (backend.verifies) {
        assert.equal(clash.status, 409, JSON.stringify(clash.body));
        assert.equal(clash.body.error.code, 'checksum_conflict');
      }
      const otherWhole = await declare(created.id, [{ name: 'small', sha256: sha(big) }]);
      assert.equal(otherWhole.status, 409);
      assert.equal(otherWhole.body.error.code, 'checksum_conflict');
      const ready = await finalize(created.id);
      assert.equal(ready.status, 200, JSON.stringify(ready.body));
      assert.equal(ready.body.components.big.sha256, sha(big));
      assert.equal(ready.body.components.small.sha256, sha(small));
      const late = await declare(created.id, [{ name: 'small', sha256: sha(small) }]);
      assert.equal(late.status, 409);
      assert.equal(late.body.error.code, 'asset_ready');
    });

    it('deferred checksums: a corrupted byte in a single PUT or a part never becomes ready', async () => {
      const good = randomBytes(4000);
      const big = randomBytes(2 * PART + 5);
      const created = await createDeferred([
        { name: 'f', size: good.length },
        { name: 'big', size: big.length, part_size: PART },
      ]);
      const { body } = await declare(created.id, [
        { name: 'f', sha256: sha(good) },
        { name: 'big', sha256: sha(big), parts: partDigests(big) },
      ]);
      const evil = Buffer.from(good);
      evil[100] = evil[100]! ^ 1;
      const corrupted = Buffer.from(partBytes(big, 3)); // the last part: 5 bytes
      corrupted[2] = corrupted[2]! ^ 1;
      const single = await put(body.uploads.f, evil);
      const results = [];
      for (const p of body.uploads.big.parts)
        results.push(await put(p, p.part_number === 3 ? corrupted : partBytes(big, p.part_number)));
      const refused = await finalize(created.id);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(await stateOf(created.id), 'pending');
      if (backend.verifies) {
        assert.equal(single.status, 400);
        assert.match(single.text, /BadDigest/);
        assert.equal(results[2]!.status, 400);
        assert.equal(refused.body.error.code, 'component_incomplete');
      } else {
        // Read back at finalize (components in name order): the joined parts hold the wrong byte.
        assert.equal(refused.body.error.code, 'component_checksum_mismatch');
        assert.equal(refused.body.error.details.component, 'big');
        assert.equal(
          refused.body.error.details.stored,
          sha(Buffer.concat([big.subarray(0, 2 * PART), corrupted])),
        );
        return;
      }
      // Right bytes on fresh URLs (declared again), and the asset becomes ready.
      const fresh = await declare(created.id, [
        { name: 'f', sha256: sha(good) },
        { name: 'big', parts: [partDigests(big)[2]!] },
      ]);
      assert.equal((await put(fresh.body.uploads.f, good)).status, 200);
      assert.equal((await put(fresh.body.uploads.big.parts[0], partBytes(big, 3))).status, 200);
      const ready = await finalize(created.id);
      assert.equal(ready.status, 200, JSON.stringify(ready.body));
    });

    if (backend.verifies) {
      it('deferred checksums: finalize refuses a component whose digests were not all declared', async () => {
        const big = randomBytes(PART + 9);
        const created = await createDeferred([{ name: 'big', size: big.length, part_size: PART }]);
        const [p1, p2] = partDigests(big);
        await declare(created.id, [{ name: 'big', parts: [p1, p2] }]);
        const refused = await finalize(created.id);
        assert.equal(refused.status, 409);
        assert.equal(refused.body.error.code, 'component_checksum_missing');
      });
    }

    it('deferred checksums: refuses digests at create and parts of a single-PUT component', async () => {
      const early = await t.as(key).post('/assets', {
        presign: true,
        deferred_checksums: true,
        kind: 'output',
        name: 'x',
        components: [{ name: 'f', size: 3, sha256: sha(Buffer.from('abc')) }],
      });
      assert.equal(early.status, 400);
      const created = await createDeferred([{ name: 'f', size: 3 }]);
      const parts = await declare(created.id, [
        { name: 'f', parts: [{ part_number: 1, sha256: sha(Buffer.from('abc')) }] },
      ]);
      assert.equal(parts.status, 400);
      const unknown = await declare(created.id, [{ name: 'nope', sha256: sha(Buffer.from('abc')) }]);
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.error.code, 'unknown_component');
    });

    it('the client uploads with deferred checksums; an upload closed mid-way resumes in another client', async () => {
      const files = {
        small: await randomFile(localDir, `small-${backend.storage}.bin`, 3000),
        big: await randomFile(localDir, `big-${backend.storage}.bin`, 3 * PART + 11),
      };
      const storePath = path.join(localDir, `store-${randomBytes(4).toString('hex')}.db`);
      const newClient = () => new Client({ serverUrl: t.url, apiKey: key, uploadStorePath: storePath });
      const a = newClient();
      const logFrom = t.logs.length;
      const first = a.uploadAsync({
        kind: 'output',
        name: 'via client',
        files: [{ path: files.small.path }, { path: files.big.path }],
      });
      // Closed once some piece is stored: the rest is hashed (or not) and sent by the next client.
      const db = new DatabaseSync(storePath);
      const stored = () =>
        (db.prepare('SELECT count(*) AS n FROM parts').get() as { n: number }).n +
        (db.prepare('SELECT count(*) AS n FROM components WHERE done = 1').get() as { n: number }).n;
      while (stored() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      a.close();
      await assert.rejects(first.done, UploadError);
      db.close();
      const b = newClient();
      try {
        const [resumed, ...rest] = await b.resumeUploads();
        assert.equal(rest.length, 0);
        const asset = await resumed!.done;
        assert.equal(asset.state, 'ready');
        assert.equal(asset.components['big-' + backend.storage + '.bin']!.sha256, files.big.sha256);
        assert.deepEqual(await downloadedDigests(b, asset.id), {
          [`small-${backend.storage}.bin`]: files.small.sha256,
          [`big-${backend.storage}.bin`]: files.big.sha256,
        });
        const calls = requests(t.logs, logFrom);
        assert.ok(calls.some((r) => r.method === 'POST' && r.path.endsWith('/checksums')));
        assert.ok(!calls.some((r) => r.path.endsWith('/presign')), 'every URL came with its digest');
      } finally {
        b.close();
      }
    });

    if (backend.storage === 'local') {
      it('does not trust the digest taken on upload for a file changed on disk since', async () => {
        const good = Buffer.from('hashed while written');
        const evil = Buffer.from('changed on disk, bad');
        assert.equal(evil.length, good.length);
        const created = await create([{ name: 'f', size: good.length, sha256: sha(good) }]);
        assert.equal((await put(created.uploads.f, good)).status, 200);
        await writeFile(path.join(localDir, 'uploads', 'assets', created.id, 'f'), evil);
        const refused = await finalize(created.id);
        assert.equal(refused.status, 409);
        assert.equal(refused.body.error.code, 'component_checksum_mismatch');
        assert.equal(refused.body.error.details.stored, sha(evil), 'finalize read the bytes back');
        assert.equal(await stateOf(created.id), 'pending');
      });
    }

    if (backend.verifies) {
      it('catches bytes that reached the store around the signed checksums', async () => {
        const store = t.seaweed!;
        const s3 = new S3Client({
          endpoint: store.endpoint,
          region: store.region,
          forcePathStyle: true,
          credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
          requestChecksumCalculation: 'WHEN_REQUIRED',
        });
        try {
          // A single object without a checksum (as a URL signed before checksums were on would leave it).
          const good = Buffer.from('hashed');
          const single = await create([{ name: 'f', size: good.length, sha256: sha(good) }]);
          await s3.send(
            new PutObjectCommand({
              Bucket: store.bucket,
              Key: `uploads/assets/${single.id}/f`,
              Body: Buffer.from('hacked'),
            }),
          );
          const refused = await finalize(single.id);
          assert.equal(refused.status, 409);
          assert.equal(refused.body.error.code, 'component_checksum_mismatch');
          assert.equal(refused.body.error.details.stored, sha(Buffer.from('hacked')));

          // A part sent without its checksum header: the store hashes it anyway, and completion compares.
          const big = randomBytes(2 * PART + 10);
          const multi = await create([inParts('big', big)]);
          const target = multi.uploads.big;
          for (const p of target.parts) {
            if (p.part_number === 2) {
              const wrong = Buffer.from(partBytes(big, 2));
              wrong[0] = wrong[0]! ^ 1;
              await s3.send(
                new UploadPartCommand({
                  Bucket: store.bucket,
                  Key: `uploads/assets/${multi.id}/big`,
                  UploadId: target.upload_id,
                  PartNumber: 2,
                  Body: wrong,
                }),
              );
            } else assert.equal((await put(p, partBytes(big, p.part_number))).status, 200);
          }
          const mismatch = await finalize(multi.id);
          assert.equal(mismatch.status, 409, JSON.stringify(mismatch.body));
          assert.equal(mismatch.body.error.code, 'component_checksum_mismatch');
          assert.equal(mismatch.body.error.details.component, 'big');
          assert.equal(await stateOf(multi.id), 'pending');
        } finally {
          s3.destroy();
        }
      });
    }
  });
}
