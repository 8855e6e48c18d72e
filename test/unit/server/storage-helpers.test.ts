import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRange } from '../../../src/server/storage/local-storage-routes.ts';
import { keyToUrlPath } from '../../../src/server/storage/storage-keys.ts';
import { choosePartSize, partCount, partSizeOf } from '../../../src/server/storage/storage-limits.ts';
import { signGrant, verifyGrant } from '../../../src/server/storage/url-signing.ts';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

describe('storage helpers', () => {
  it('lays out parts, the last one shorter', () => {
    assert.equal(partCount(10, 4), 3);
    assert.deepEqual(
      [1, 2, 3].map((n) => partSizeOf(10, 4, n)),
      [4, 4, 2],
    );
    assert.deepEqual(
      [1, 2].map((n) => partSizeOf(8, 4, n)),
      [4, 4],
    );
  });

  it('grows the part size to a whole MiB when 10,000 parts are not enough', () => {
    assert.equal(choosePartSize(6 * GIB, 512 * MIB, { min: 5 * MIB, max: 5 * GIB }), 512 * MIB);
    // 5 TiB in 512 MiB parts would be 10,240 parts.
    assert.equal(choosePartSize(5 * 1024 * GIB, 512 * MIB, { min: 5 * MIB, max: 5 * GIB }), 525 * MIB);
    assert.throws(() => choosePartSize(10, 4 * MIB, { min: 5 * MIB, max: 5 * GIB }), {
      code: 'invalid_argument',
    });
    assert.throws(() => choosePartSize(0, 5 * MIB, { min: 5 * MIB, max: 5 * GIB }), {
      code: 'invalid_argument',
    });
  });

  it('encodes keys per segment', () => {
    assert.equal(keyToUrlPath('assets/a b/#?%+é'), 'assets/a%20b/%23%3F%25%2B%C3%A9');
  });

  it('parses one byte range and ignores the rest', () => {
    assert.deepEqual(parseRange('bytes=0-0', 10), [0, 0]);
    assert.deepEqual(parseRange('bytes=8-100', 10), [8, 9]);
    assert.deepEqual(parseRange('bytes=-20', 10), [0, 9]);
    assert.equal(parseRange('bytes=10-', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-1,4-5', 10), undefined);
    assert.equal(parseRange('items=0-1', 10), undefined);
    assert.equal(parseRange(undefined, 10), undefined);
  });

  it('signs every field of a grant and checks expiry only after the signature', () => {
    const secret = Buffer.alloc(32, 7);
    const grant = {
      method: 'PUT' as const,
      key: 'assets/x',
      expires: 2_000_000_000,
      size: 5,
      uploadId: 'a'.repeat(32),
      part: 2,
    };
    const query = {
      expires: '2000000000',
      size: '5',
      upload_id: 'a'.repeat(32),
      part: '2',
      signature: signGrant(secret, grant),
    };
    assert.deepEqual(verifyGrant(secret, 'PUT', 'assets/x', query, 0), grant);
    for (const [name, value] of [
      ['size', '6'],
      ['part', '3'],
      ['upload_id', 'b'.repeat(32)],
      ['expires', '2000000001'],
    ]) {
      assert.throws(
        () => verifyGrant(secret, 'PUT', 'assets/x', { ...query, [name!]: value }, 0),
        { code: 'signature_invalid' },
        name,
      );
    }
    assert.throws(() => verifyGrant(secret, 'GET', 'assets/x', query, 0), { code: 'signature_invalid' });
    assert.throws(() => verifyGrant(secret, 'PUT', 'assets/x', { ...query, size: ['5', '6'] }, 0), {
      code: 'signature_invalid',
    });
    assert.throws(() => verifyGrant(secret, 'PUT', 'assets/x', query, 2_000_000_000_000), {
      code: 'url_expired',
    });
  });
});
