// `assay run` keeps trying its final move through a service outage: a finished run is never left running.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { runCli, tempHome } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

/** Passes everything to the service, except that the first `failures` succeed calls answer 503 as a restarting service would. */
async function flakySucceedProxy(target: string, failures: number) {
  let refused = 0;
  const server = http.createServer(async (req, res) => {
    if (req.url?.endsWith('/succeed') && refused < failures) {
      refused += 1;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'database_unavailable', message: 'restarting' } }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('assay run through a service outage at the end', () => {
  let t: TestService;
  let home: string;
  before(async () => {
    t = await startTestService({ listen: true });
    home = await tempHome();
  });
  after(async () => {
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  it('tries succeed again after 503s and the run ends succeeded, exit code 0', async () => {
    const { key } = await t.createUser();
    const experimentId = (await committedExperiment(t, key)).id;
    const run = await createRun(t, key, experimentId);
    const proxy = await flakySucceedProxy(t.url!, 2);
    try {
      const result = await runCli(
        ['run', '--experiment', experimentId, '--variation', '1', '--run', String(run.r), '--', 'true'],
        {
          home,
          env: { SERVICE_SERVER_URL: proxy.url, SERVICE_API_KEY: key },
        },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(proxy.refused(), 2);
      assert.match(result.stderr, /trying again/);
      assert.equal((await t.as(key).get(run.path)).body.state, 'succeeded');
    } finally {
      await proxy.close();
    }
  });
});
