// The embedded dev server belongs to its data dir: a later start of the same dir reuses it, another dir never
// joins it (it moves to a free port instead).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startDevServer, type DevServer } from '../../src/orchestrator/temporal-dev-server.ts';
import { freePorts } from '../support/free-port.ts';
import { resolveTool } from '../support/tool-paths.ts';

describe('the embedded Temporal dev server', () => {
  const dirs: string[] = [];
  const servers: DevServer[] = [];
  after(async () => {
    for (const server of servers) await server.stop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function start(dataDir: string, port: number, uiPort: number) {
    const server = await startDevServer({
      cli: resolveTool('temporal'),
      dataDir,
      port,
      uiPort,
      namespace: 'default',
    });
    servers.push(server);
    return server;
  }

  it('is reused by a later start of its own data dir, and never joined from another', async () => {
    const [port, uiPort] = (await freePorts(2)) as [number, number];
    const [mine, theirs] = [
      await mkdtemp(path.join(tmpdir(), 'assay-dev-a-')),
      await mkdtemp(path.join(tmpdir(), 'assay-dev-b-')),
    ];
    dirs.push(mine, theirs);
    const first = await start(mine, port, uiPort);
    assert.deepEqual([first.address, first.owned, first.movedFrom], [`127.0.0.1:${port}`, true, undefined]);

    const again = await start(mine, port, uiPort);
    assert.deepEqual([again.address, again.owned], [first.address, false], 'the same data dir reuses it');

    const other = await start(theirs, port, uiPort);
    assert.equal(other.owned, true, 'another data dir starts its own');
    assert.equal(other.movedFrom, port);
    assert.notEqual(other.address, first.address);
    assert.notEqual(other.uiUrl, first.uiUrl);
    const record = JSON.parse(await readFile(path.join(theirs, 'dev-server.json'), 'utf8'));
    assert.equal(`127.0.0.1:${record.port}`, other.address);

    await first.stop();
    await assert.rejects(readFile(path.join(mine, 'dev-server.json')), 'a stopped server leaves no record');
  });
});
