import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../../src/settings/config-error.ts';
import { readSetting } from '../../../src/settings/read-setting.ts';
import { SETTINGS, type Setting, type SettingName } from '../../../src/settings/settings-schema.ts';

const names = Object.keys(SETTINGS) as SettingName[];
const names_ = (e: unknown, name: string) => e instanceof ConfigError && e.message.includes(name);

describe('readSetting', () => {
  it('reads the schema default of every setting when it is unset or blank', () => {
    for (const name of names) {
      const setting = SETTINGS[name];
      const expected =
        setting.kind === 'seconds'
          ? setting.default * 1000
          : 'default' in setting
            ? setting.default
            : undefined;
      assert.equal(readSetting({}, name), expected, name);
      assert.equal(readSetting({ [name]: '  ' }, name), expected, name);
    }
  });

  it('refuses a value of the wrong type, naming the variable', () => {
    for (const name of names) {
      const setting = SETTINGS[name];
      if (setting.kind === 'text' && !('choices' in setting) && !('pattern' in setting)) continue;
      assert.throws(
        () => readSetting({ [name]: 'not valid at all' }, name),
        (e) => names_(e, name),
        name,
      );
    }
  });

  it('keeps the value of a secret out of its error message', () => {
    const url = 'mysql://user:hunter2@db/assay';
    assert.throws(
      () => readSetting({ DATABASE_URL: url }, 'DATABASE_URL'),
      (e) => names_(e, 'DATABASE_URL') && !(e as Error).message.includes('hunter2'),
    );
  });

  it('applies tighter bounds a caller asks for', () => {
    assert.equal(readSetting({ ASSAY_MULTIPART_PART_BYTES: '10' }, 'ASSAY_MULTIPART_PART_BYTES'), 10);
    assert.throws(
      () => readSetting({ ASSAY_MULTIPART_PART_BYTES: '10' }, 'ASSAY_MULTIPART_PART_BYTES', { min: 1024 }),
      (e) => names_(e, 'ASSAY_MULTIPART_PART_BYTES'),
    );
  });

  it('reads seconds as milliseconds, fractions allowed, and base URLs without trailing slashes', () => {
    assert.equal(readSetting({ ASSAY_RUN_POLL_S: '0.25' }, 'ASSAY_RUN_POLL_S'), 250);
    assert.equal(
      readSetting({ ASSAY_SERVICE_URL: 'http://svc:8080//' }, 'ASSAY_SERVICE_URL'),
      'http://svc:8080',
    );
    assert.equal(
      readSetting({ ASSAY_JWT_JWKS_URL: 'https://idp/keys/' }, 'ASSAY_JWT_JWKS_URL'),
      'https://idp/keys/',
    );
  });

  it('describes every setting with a reader and a table', () => {
    for (const name of names) {
      const setting: Setting = SETTINGS[name];
      assert.ok(setting.description.length > 0 && setting.readBy.length > 0, name);
      assert.ok(
        !/\|/.test(setting.description + (setting.shownDefault ?? '')),
        `${name}: a | breaks the table`,
      );
    }
  });
});
