import ts from 'typescript';
import fs from 'node:fs';
import path from 'node:path';
const root = path.resolve('src/server');
const files = fs
  .readdirSync(root, { recursive: true })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => path.join(root, f));
const node = (f) => {
  const rel = path.relative(root, f);
  const [head, ...rest] = rel.split(path.sep);
  return rest.length ? head : rel;
};
const edges = new Map();
for (const f of files) {
  const info = ts.preProcessFile(fs.readFileSync(f, 'utf8'), true, true);
  for (const imp of info.importedFiles) {
    let target = imp.fileName;
    if (!target.startsWith('.')) continue;
    const abs = path.resolve(path.dirname(f), target);
    let to;
    if (abs.startsWith(root + path.sep)) to = node(abs);
    else to = '../' + path.relative(path.resolve('src'), abs).split(path.sep)[0];
    const from = node(f);
    if (from === to) continue;
    const k = `${from} -> ${to}`;
    edges.set(k, [...(edges.get(k) ?? []), path.relative(root, f)]);
  }
}
for (const [k, v] of [...edges].sort()) console.log(k, '   ', [...new Set(v)].join(' '));
