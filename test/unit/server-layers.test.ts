// The service's feature folders import one way: the folder graph of src/server (built from every import of
// its modules, `import type` and `import()` included) has no cycle, and every folder has a layer in
// eslint.config.js, whose zones hold each folder to the layers below it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { serverLayers } from '../../eslint.config.js';

const repo = path.resolve(import.meta.dirname, '../..');

/** Folder → the folders its modules import; the files at the top of `root` wire them and are left out. */
function folderGraph(root: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const folderOf = (file: string) => {
    const [head, ...rest] = path.relative(root, file).split(path.sep);
    return rest.length > 0 && head !== '..' ? head! : undefined;
  };
  for (const rel of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(root, rel);
    const from = folderOf(file);
    if (!from || !/\.tsx?$/.test(rel)) continue;
    const edges = graph.get(from) ?? graph.set(from, new Set()).get(from)!;
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const to = fileName.startsWith('.') ? folderOf(path.resolve(path.dirname(file), fileName)) : undefined;
      if (to && to !== from) edges.add(to);
    }
  }
  return graph;
}

/** A cycle of the graph as its folders in order (the first again at the end), or undefined. */
function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const done = new Set<string>();
  const walk = (node: string, trail: string[]): string[] | undefined => {
    const at = trail.indexOf(node);
    if (at >= 0) return [...trail.slice(at), node];
    if (done.has(node)) return undefined;
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const cycle = walk(next, [...trail, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = walk(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('src/server feature folders', () => {
  it('import each other without a cycle', () => {
    const graph = folderGraph(path.join(repo, 'src/server'));
    assert.ok(graph.has('runs') && graph.get('orchestration')!.has('runs'), 'the graph was not read');
    assert.equal(findCycle(graph)?.join(' → '), undefined);
  });

  it('finds a cycle between two folders, through an import type', () => {
    const graph = folderGraph(path.join(repo, 'test/fixtures/lint/folder-cycle'));
    assert.deepEqual(findCycle(graph), ['orchestration', 'runs', 'orchestration']);
  });

  it('each have a layer in eslint.config.js, once', () => {
    const folders = readdirSync(path.join(repo, 'src/server'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    assert.deepEqual([...serverLayers.flat()].sort(), folders);
  });
});
