// A fetch over node:http and node:https for short-lived Node processes that make a handful of calls: `assay
// run` starts once per managed run. Node's own fetch loads its bundled undici on first use, which cost ~60-90
// ms of CPU per process, and each call costs several times what node:http's does (four calls: ~110 ms of CPU
// against ~15 ms). It does what Transport asks of a fetch (transport.ts) and nothing more: a method, headers,
// a string body and an abort signal in; the status, the headers and the body as text out. No redirects, no
// decompression (it sends no accept-encoding), no proxy: the service's API is plain JSON over one origin.
import { createRequire } from 'node:module';
import type { FetchLike, FetchLikeResponse } from './transport.ts';

// Required, not imported: an ES import of node:http builds its module namespace from every export, and
// reading its lazy WebSocket export loads the same undici (~90 ms of CPU against ~10 ms for the require).
// node:https is required on the first https call only: it loads TLS and crypto (~15 ms of CPU), which a
// runner that reaches the service over plain http (the local provider's) never needs.
const requireHere = createRequire(import.meta.url);
type Client = typeof import('node:http') | typeof import('node:https');
const clients: Partial<Record<'http:' | 'https:', { module: Client; agent: import('node:http').Agent }>> = {};

/**
 * The module and agent for a protocol; kept-alive sockets are unref'd while idle, so they never hold the
 * process open.
 */
function clientFor(protocol: 'http:' | 'https:') {
  return (clients[protocol] ??= (() => {
    const module = requireHere(protocol === 'https:' ? 'node:https' : 'node:http') as Client;
    return { module, agent: new module.Agent({ keepAlive: true }) };
  })());
}

export const nodeFetch: FetchLike = (url, init) =>
  new Promise<FetchLikeResponse>((resolve, reject) => {
    const target = new URL(url);
    const protocol =
      target.protocol === 'https:' ? 'https:' : target.protocol === 'http:' ? 'http:' : undefined;
    if (!protocol) {
      reject(new TypeError(`fetch failed: unsupported protocol ${target.protocol}`));
      return;
    }
    const { signal } = init;
    // As fetch does: an abort rejects with the signal's reason (a DOMException TimeoutError for
    // AbortSignal.timeout); anything else is a TypeError whose cause carries the system error's code.
    const fail = (error: unknown) =>
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    if (signal?.aborted) {
      fail(signal.reason);
      return;
    }
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const { module, agent } = clientFor(protocol);
    const request = module.request(
      target,
      { method: init.method, headers, agent, ...(signal ? { signal } : {}) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', fail);
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            ok: status >= 200 && status <= 299,
            status,
            headers: response.headers,
            text: () => Promise.resolve(text),
          });
        });
      },
    );
    request.on('error', fail);
    request.end(init.body);
  });
