import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordingProxy {
  url: string;
  /** Every request seen, as "METHOD /path?query". */
  requests: string[];
  close(): Promise<void>;
}

/** What an intercept makes of a request instead of passing it on: a 503 as from a restarting service, a
 * connection closed before any answer, or (`lost`) one closed after the service handled it, its answer lost. */
export type Fault = '503' | 'reset' | 'lost';

/**
 * A pass-through proxy in front of the real service, so client tests can count requests, see what a newer
 * server would send (`addField` adds an unknown key to every JSON object answer) and meet outages on chosen
 * requests (`intercept` names the fault a request meets, or nothing to pass it on).
 */
export async function startRecordingProxy(
  target: string,
  opts: {
    addField?: [string, unknown];
    intercept?: (req: http.IncomingMessage) => Fault | undefined;
  } = {},
): Promise<RecordingProxy> {
  const requests: string[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const fault = opts.intercept?.(req);
    requests.push(`${req.method} ${req.url}${fault ? ` (${fault})` : ''}`);
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === '503') {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'database_unavailable', message: 'restarting' } }));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    let text = await upstream.text();
    if (fault === 'lost') {
      req.socket.destroy();
      return;
    }
    if (opts.addField && upstream.headers.get('content-type')?.includes('json') && text.startsWith('{')) {
      const body = JSON.parse(text);
      body[opts.addField[0]] = opts.addField[1];
      if (Array.isArray(body.items))
        for (const item of body.items)
          if (item && typeof item === 'object') item[opts.addField[0]] = opts.addField[1];
      text = JSON.stringify(body);
    }
    res.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'text/plain',
      'x-request-id': upstream.headers.get('x-request-id') ?? '',
    });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
