// A proxy in front of moto's EC2 endpoint that plays the two things moto cannot: EC2 taking a spot instance
// back, and an EC2 API that flaps (hangs, 503s). moto never interrupts a spot instance by itself: it only
// records that one was asked for (instanceLifecycle `spot`), so the interruption is written here, on
// command, into the DescribeInstances answers, as EC2 would report it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a faulted DescribeInstances meets: no answer at all (past the client's timeout), or a 503. */
export type DescribeFault = 'hang' | '503';

export interface Ec2Proxy {
  url: string;
  /** The form bodies of the RunInstances calls that went through, decoded. */
  runInstances: URLSearchParams[];
  /**
   * From now on, DescribeInstances reports the instance terminated with StateReason
   * Server.SpotInstanceTermination (the caller terminates it in moto first, as EC2 would have).
   */
  interrupt(instanceId: string): void;
  /** The next `count` DescribeInstances calls meet `fault`; resolves once all of them have. */
  faultDescribes(count: number, fault: DescribeFault): Promise<void>;
  /** Faults served so far. */
  faultsServed: number;
  close(): Promise<void>;
}

const SPOT_REASON =
  '<stateReason><code>Server.SpotInstanceTermination</code>' +
  '<message>Server.SpotInstanceTermination: Spot instance termination</message></stateReason>';
const TERMINATED = '<instanceState><code>48</code><name>terminated</name></instanceState>';

export async function startEc2Proxy(target: string): Promise<Ec2Proxy> {
  const interrupted = new Set<string>();
  const pending: { fault: DescribeFault; served: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  const runInstances: URLSearchParams[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const params = new URLSearchParams(body.toString('utf8'));
    const action = params.get('Action');
    if (action === 'RunInstances') runInstances.push(params);
    if (action === 'DescribeInstances' && pending.length > 0) {
      const { fault, served } = pending.shift()!;
      proxy.faultsServed++;
      served();
      if (fault === '503') {
        res.writeHead(503, { 'content-type': 'text/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>Unavailable</Code>' +
            '<Message>The service is unavailable.</Message></Error></Errors><RequestID>proxy</RequestID></Response>',
        );
      } else {
        // Held until the client gives up on it (or the proxy closes).
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
      }
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    let upstream: Response;
    try {
      upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: body.length > 0 ? body : undefined,
      });
    } catch {
      res.writeHead(502).end();
      return;
    }
    let text = await upstream.text();
    if (action === 'DescribeInstances' && interrupted.size > 0) text = rewrite(text, interrupted);
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/xml' });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const proxy: Ec2Proxy = {
    url: `http://127.0.0.1:${port}`,
    runInstances,
    faultsServed: 0,
    interrupt(instanceId) {
      interrupted.add(instanceId);
    },
    async faultDescribes(count, fault) {
      const all: Promise<void>[] = [];
      for (let i = 0; i < count; i++)
        all.push(new Promise((served) => pending.push({ fault, served: () => served() })));
      await Promise.all(all);
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return proxy;
}

/**
 * The instance items of an EC2 XML answer whose instanceId is interrupted get EC2's words for a spot
 * interruption. Items nest (network interfaces, block devices), so they are matched by depth.
 */
function rewrite(xml: string, interrupted: Set<string>): string {
  const tag = /<(\/?)([A-Za-z][\w.:-]*)[^>]*?(\/?)>/g;
  const stack: string[] = [];
  const items: [number, number][] = [];
  let start = -1;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    const [, closing, name, selfClosing] = m;
    if (selfClosing) continue;
    if (!closing) {
      if (name === 'item' && stack.at(-1) === 'instancesSet') start = m.index;
      stack.push(name!);
      continue;
    }
    stack.pop();
    if (name === 'item' && stack.at(-1) === 'instancesSet') items.push([start, m.index + m[0].length]);
  }
  let out = '';
  let at = 0;
  for (const [from, to] of items) {
    const item = xml.slice(from, to);
    const id = /<instanceId>([^<]+)<\/instanceId>/.exec(item)?.[1];
    if (!id || !interrupted.has(id)) continue;
    const changed = item
      .replace(/<stateReason>[\s\S]*?<\/stateReason>|<stateReason\/>/, SPOT_REASON)
      .replace(/<instanceState>[\s\S]*?<\/instanceState>/, TERMINATED);
    out += xml.slice(at, from) + changed;
    at = to;
  }
  return out + xml.slice(at);
}
