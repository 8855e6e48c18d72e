import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SETTINGS } from '../../../src/settings/settings-schema.ts';
import { documentedRows, SETTINGS_DOCS, tableRows } from '../../../src/settings/settings-table.ts';

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');

describe('settings tables in the docs', () => {
  for (const [file, tables] of Object.entries(SETTINGS_DOCS)) {
    for (const table of tables) {
      it(`${file} lists the ${table} settings exactly as the schema has them (run scripts/settings-docs.ts)`, () => {
        assert.deepEqual(documentedRows(read(file), table), tableRows(table));
      });
    }
  }

  it('puts every setting of the schema in some table of README.md', () => {
    const readme = SETTINGS_DOCS['README.md']!.flatMap(
      (table) => documentedRows(read('README.md'), table) ?? [],
    );
    const listed = new Set(readme.map(([name]) => name));
    assert.deepEqual(
      Object.keys(SETTINGS).filter((name) => !listed.has(`\`${name}\``)),
      [],
    );
  });
});
