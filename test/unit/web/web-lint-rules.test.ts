// The web UI's own lint rules fire on a deliberate violation: the rules of hooks (eslint-plugin-react-hooks'
// recommended set) and query keys built only by src/web/ui/query-keys.ts. Linted through ESLint's API with
// the repository's eslint.config.js, as if each snippet were a file of the UI.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const eslint = new ESLint({
  cwd: root,
  ignore: false,
  // These rules need no type information, so a snippet need not be a file of the TS project.
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => ruleId.startsWith('react-hooks/') || ruleId === 'no-restricted-syntax',
});

/** The rule ids reported for `code` linted as the file at `filePath` (relative to the repository). */
async function reported(code: string, filePath = 'src/web/ui/x.tsx'): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, filePath) });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('web UI lint rules', () => {
  it('refuses a hook called conditionally, and a ref read during render', async () => {
    const conditional = `import { useState } from 'react';
export function A({ on }: { on: boolean }) {
  if (on) useState(0);
  return null;
}
`;
    assert.ok((await reported(conditional)).includes('react-hooks/rules-of-hooks'));
    const refRead = `import { useRef } from 'react';
export function B() {
  const r = useRef(0);
  return <p>{r.current}</p>;
}
`;
    assert.ok((await reported(refRead)).includes('react-hooks/refs'));
  });

  it('refuses a query key written inline, except in query-keys.ts', async () => {
    const inline = `export const q = { queryKey: ['experiment', 'id'], queryFn: () => 1 };\n`;
    assert.deepEqual(await reported(inline, 'src/web/ui/x.ts'), ['no-restricted-syntax']);
    assert.deepEqual(await reported(inline, 'src/web/ui/query-keys.ts'), []);
    const built = `import { queryKeys } from './query-keys.ts';
export const q = { queryKey: queryKeys.experiment('id'), queryFn: () => 1 };
`;
    assert.deepEqual(await reported(built, 'src/web/ui/x.ts'), []);
  });

  it('lets a component that follows the rules through', async () => {
    const fine = `import { useState } from 'react';
export function C() {
  const [n, setN] = useState(0);
  return <button type="button" onClick={() => setN(n + 1)}>{n}</button>;
}
`;
    assert.deepEqual(await reported(fine), []);
  });
});
