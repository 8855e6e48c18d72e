// Rewrites the settings tables of README.md and docs/*.md from src/settings/settings-schema.ts. Run after
// changing a setting: node scripts/settings-docs.ts (test/unit/settings/settings-docs.test.ts checks).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { replaceSection, SETTINGS_DOCS } from '../src/settings/settings-table.ts';

const root = path.resolve(import.meta.dirname, '..');

for (const [file, tables] of Object.entries(SETTINGS_DOCS)) {
  const filepath = path.join(root, file);
  let markdown = readFileSync(filepath, 'utf8');
  for (const table of tables) markdown = replaceSection(markdown, table);
  const options = await prettier.resolveConfig(filepath);
  writeFileSync(filepath, await prettier.format(markdown, { ...options, filepath }));
  process.stdout.write(`${file}: ${tables.join(', ')}\n`);
}
