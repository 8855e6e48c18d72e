// The runner's fetch over node:http (src/client/core/node-fetch.ts) behaves as the global fetch does under
// the client's Transport: JSON in and out, typed errors with the request id, timeouts, refused connections.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { APIConnectionError, APITimeoutError, ConflictError } from '../../src/client/index.ts';
import { nodeFetch } from '../../src/client/core/node-fetch.ts';
import { Transport, type FetchLike } from '../../src/client/core/transport.ts';
import { freePort } from '../support/free-port.ts';
import { repoRoot } from '../support/cli.ts';

describe('Transport on the global fetch and on nodeFetch', () => {
  let server: http.Server;
  let url: string;

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        if (req.url === '/slow') return void setTimeout(() => res.end('{}'), 2_000);
        if (req.url === '/conflict') {
          res.writeHead(409, { 'content-type': 'application/json', 'x-request-id': 'req-42' });
          return void res.end(JSON.stringify({ error: { code: 'run_not_running', message: 'it ended' } }));
        }
        if (req.url === '/empty') return void res.writeHead(204).end();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            method: req.method,
            auth: req.headers.authorization,
            type: req.headers['content-type'] ?? null,
            length: req.headers['content-length'] ?? null,
            body,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  for (const [name, fetchImpl] of [
    ['global fetch', undefined],
    ['nodeFetch', nodeFetch],
  ] as [string, FetchLike | undefined][]) {
    const transport = (base: string, timeout = 30) =>
      new Transport({
        serverUrl: base,
        apiKey: 'sk_test',
        timeout,
        ...(fetchImpl ? { fetch: fetchImpl } : {}),
      });

    it(`${name}: sends the key and a JSON body (its byte length, not its characters), parses the answer`, async () => {
      const answer = await transport(url).post<Record<string, unknown>>('/echo', { note: 'größe ✓' });
      assert.deepEqual(answer, {
        method: 'POST',
        auth: 'Bearer sk_test',
        type: 'application/json',
        length: String(Buffer.byteLength(JSON.stringify({ note: 'größe ✓' }))),
        body: JSON.stringify({ note: 'größe ✓' }),
      });
      assert.equal((await transport(url).get<Record<string, unknown>>('/echo')).length, null);
      assert.equal(await transport(url).post('/empty'), undefined);
    });

    it(`${name}: a 409 is a ConflictError with the envelope's code and the request id`, async () => {
      const error = await transport(url)
        .post('/conflict')
        .catch((e: unknown) => e);
      assert.ok(error instanceof ConflictError);
      assert.equal(error.code, 'run_not_running');
      assert.equal(error.requestId, 'req-42');
    });

    it(`${name}: no answer within the timeout is an APITimeoutError`, async () => {
      await assert.rejects(transport(url, 0.2).get('/slow'), APITimeoutError);
    });

    it(`${name}: a refused connection is an APIConnectionError naming ECONNREFUSED`, async () => {
      const closed = `http://127.0.0.1:${await freePort()}`;
      await assert.rejects(transport(closed).get('/echo'), (error: unknown) => {
        assert.ok(error instanceof APIConnectionError && !(error instanceof APITimeoutError));
        assert.match(error.message, /ECONNREFUSED/);
        return true;
      });
    });
  }

  it("nodeFetch never loads Node's bundled undici, which the global fetch loads on first use", async () => {
    const script = (useNodeFetch: boolean) => `
      import { Transport } from ${JSON.stringify(path.join(repoRoot, 'src/client/core/transport.ts'))};
      import { nodeFetch } from ${JSON.stringify(path.join(repoRoot, 'src/client/core/node-fetch.ts'))};
      const t = new Transport({ serverUrl: ${JSON.stringify(url)}, apiKey: 'k', timeout: 5${useNodeFetch ? ', fetch: nodeFetch' : ''} });
      await t.post('/echo', {});
      await t.post('/conflict').catch(() => {});
      console.log(process.moduleLoadList.some((m) => m.includes('undici')));`;
    // Asynchronously: the server answering the child lives in this process.
    const loaded = async (useNodeFetch: boolean) =>
      (
        await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script(useNodeFetch)])
      ).stdout.trim();
    assert.equal(await loaded(true), 'false');
    assert.equal(await loaded(false), 'true');
  });
});
