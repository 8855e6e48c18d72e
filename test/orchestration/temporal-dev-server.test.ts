// The embedded dev server belongs to its data dir: a later start of the same dir reuses it, another dir never
// joins it (it moves to a free port instead).
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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

  async function start(dataDir: string, port: number, uiPort: number, cli = resolveTool('temporal')) {
    const server = await startDevServer({
      cli,
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

  it('tries again when the CLI dies before serving, and names the panic when every try does', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'assay-dev-c-'));
    dirs.push(dir);
    // A CLI that panics on its first start, as one that lost an internal port to another process does.
    const flaky = path.join(dir, 'temporal-flaky');
    await writeFile(
      flaky,
      `#!/bin/sh\nif [ ! -e "${dir}/tried" ]; then touch "${dir}/tried"; echo 'panic: listen tcp 127.0.0.1:1: bind: address already in use' >&2; echo 'goroutine 1 [running]:' >&2; exit 2; fi\nexec "${resolveTool('temporal')}" "$@"\n`,
    );
    await chmod(flaky, 0o755);
    const [port, uiPort] = (await freePorts(2)) as [number, number];
    const server = await start(path.join(dir, 'data'), port, uiPort, flaky);
    assert.equal(server.address, `127.0.0.1:${port}`, 'the second try serves');

    const broken = path.join(dir, 'temporal-broken');
    await writeFile(broken, `#!/bin/sh\necho 'panic: no luck' >&2\necho '\tsome/stack.go:12' >&2\nexit 2\n`);
    await chmod(broken, 0o755);
    const [port2, uiPort2] = (await freePorts(2)) as [number, number];
    await assert.rejects(
      start(path.join(dir, 'data2'), port2, uiPort2, broken),
      /exited \(2\): panic: no luck/,
    );
  });
});
