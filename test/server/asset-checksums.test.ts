// A wrong byte never becomes ready, whether the store verifies the signed checksums on upload (SeaweedFS), finalize
// reads the bytes back (ASSAY_S3_CHECKSUMS=off, a store that ignores checksums), or the local backend compares
// the digest it took while writing.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
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
      t = await startTestService({ storage: backend.storage, env: backend.env });
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
