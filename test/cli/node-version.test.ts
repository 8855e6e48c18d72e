import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import satisfies from 'semver/functions/satisfies.js';
import { assayBin, repoRoot } from '../support/cli.ts';
import { satisfiesRange } from '../../bin/node-version.js';

const range: string = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).engines.node;

/** `assay --help` under `node`, which reports `version` to the program when `spoofed` (a preload sets it). */
function assayHelp(node: string, spoofed?: string) {
  const preload = spoofed
    ? ['--import', `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${spoofed}'})`]
    : [];
  return spawnSync(node, [...preload, assayBin, '--help'], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin' },
  });
}

/** A Node on PATH that package.json's engines exclude (the machine's own is often one), else undefined. */
function oldNodeOnPath(): { node: string; version: string } | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const node = path.join(dir, 'node');
    try {
      accessSync(node, constants.X_OK);
      const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
      if (!satisfies(version, range)) return { node, version };
    } catch {
      // not there, or not a Node that answers --version
    }
  }
  return undefined;
}

describe('bin/assay.js and the Node that runs it', () => {
  it('an old Node: exit 2 and one line naming the Node needed, before any TypeScript is loaded', () => {
    // A real old Node when the machine has one; else this Node told to report an old version.
    const old = oldNodeOnPath();
    const node = old?.node ?? process.execPath;
    const version = old?.version ?? '20.20.2';
    const r = assayHelp(node, old ? undefined : version);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `assay needs Node ${range}; this is Node ${version} (${node})\n`);
  });

  for (const [version, runs] of [
    ['22.17.1', false],
    ['22.18.0', true],
    ['23.5.0', false],
    ['23.6.0', true],
    ['24.21.0', true],
    ['26.0.0-nightly20270101', true],
  ] as const) {
    it(`Node ${version} ${runs ? 'runs it' : 'is refused'}`, () => {
      const r = assayHelp(process.execPath, version);
      assert.equal(r.status, runs ? 0 : 2, r.stderr);
      if (runs) assert.match(r.stdout, /^Usage: assay /);
      else assert.match(r.stderr, new RegExp(`^assay needs Node .+; this is Node ${version} `));
    });
  }
});

describe("bin/node-version.js's range check", () => {
  const versions = [
    '0.12.0',
    '18.20.4',
    '20.20.2',
    '22.17.1',
    '22.18.0',
    '22.99.1',
    '23.5.0',
    '23.6.0',
    '23.6.1',
  ];
  const more = [
    '24.0.0',
    '24.21.0',
    '25.0.0',
    '26.0.0',
    '26.0.0-nightly20270101',
    '22.18.0-rc.1',
    '23.6.0+build',
  ];
  const ranges = [
    range,
    '^22.18.0 || >=23.6.0',
    '>=20.0.0 <24.0.0',
    '>22.17.1',
    '<=23.6.0',
    '=24.0.0',
    '24.0.0',
  ];

  it('answers as semver does (prereleases counted as their version) for the forms engines ranges use', () => {
    for (const r of ranges)
      for (const version of [...versions, ...more]) {
        const asSemver = satisfies(version.replace(/[-+].*$/, ''), r);
        assert.equal(satisfiesRange(version, r), asSemver, `${version} in ${r}`);
      }
  });

  it('refuses a range form it does not understand instead of guessing', () => {
    for (const r of ['~22.18.0', '22.x', '>=22', '^0.12.0', '22.18.0 - 24.0.0', '*'])
      assert.throws(() => satisfiesRange('24.0.0', r), /unsupported Node version range/, r);
  });
});
