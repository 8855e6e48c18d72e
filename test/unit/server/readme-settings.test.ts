import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SETTINGS } from '../../../src/server/config.ts';
import { STORAGE_SETTINGS } from '../../../src/server/storage/storage-config.ts';
import { EC2_SETTINGS } from '../../../src/compute/ec2-config.ts';
import { LOCAL_SETTINGS } from '../../../src/compute/local-config.ts';
import { ORCHESTRATOR_SETTINGS } from '../../../src/orchestrator/orchestrator-config.ts';

describe('README configuration table', () => {
  it('documents every variable the service reads', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const missing = [
      ...SETTINGS,
      ...STORAGE_SETTINGS,
      ...EC2_SETTINGS,
      ...LOCAL_SETTINGS,
      ...ORCHESTRATOR_SETTINGS,
    ]
      .map(([name]) => name)
      .filter((name) => !readme.includes(`\`${name}\``));
    assert.deepEqual(missing, []);
  });
});
