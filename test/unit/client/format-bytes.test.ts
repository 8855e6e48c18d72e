// The one byte formatter the CLI and the web UI share.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBytes } from '../../../src/client/browser.ts';

describe('formatBytes', () => {
  it('counts bytes as such, then binary units with one decimal, up to TiB', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1024), '1.0 KiB');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatBytes(5 * 1024 ** 2 + 1), '5.0 MiB');
    assert.equal(formatBytes(3.25 * 1024 ** 3), '3.3 GiB');
    assert.equal(formatBytes(2048 * 1024 ** 4), '2048.0 TiB');
  });
});
