// What our server saw of a benchmark window, from its own /metrics (prom-client): how long it took over one
// route (its request histogram, from the request's arrival to the answer) and how late its event loop ran.
// Against the latency the load client measured, this splits a slow batch into time inside the server and time
// outside it (the client, the kernel, waiting for a core).

/** The cumulative bucket counts of one route's requests, and the event loop's delay since the last scrape. */
interface Scrape {
  buckets: Map<number, number>;
  lagP99S: number;
  lagMaxS: number;
}

async function scrape(url: string, method: string, route: string): Promise<Scrape> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  let lagP99S = NaN;
  let lagMaxS = NaN;
  for (const line of text.split('\n')) {
    if (line.startsWith('assay_http_request_duration_seconds_bucket{')) {
      if (!line.includes(`method="${method}"`) || !line.includes(`route="${route}"`)) continue;
      const le = /le="([^"]+)"/.exec(line)?.[1];
      const count = Number(line.slice(line.lastIndexOf(' ') + 1));
      const bound = le === '+Inf' ? Infinity : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + count);
    } else if (line.startsWith('nodejs_eventloop_lag_p99_seconds ')) lagP99S = Number(line.split(' ')[1]);
    else if (line.startsWith('nodejs_eventloop_lag_max_seconds ')) lagMaxS = Number(line.split(' ')[1]);
  }
  return { buckets, lagP99S, lagMaxS };
}

export interface ServerView {
  requests: number;
  /** The histogram bucket holding the route's p50 and p99 over the window: "≤ 5 ms" and the like. */
  p50: string;
  p99: string;
  /** The server's event-loop delay over the window (prom-client resets it at each scrape). */
  lagP99Ms: number;
  lagMaxMs: number;
}

const bucketLabel = (bound: number) =>
  bound === Infinity
    ? '> 10 s'
    : `≤ ${bound >= 1 ? `${bound} s` : `${Math.round(bound * 1000 * 10) / 10} ms`}`;

/** Starts watching `method route` on the server at `url`; `end()` answers what it saw since. */
export async function watchServer(
  url: string,
  method: string,
  route: string,
): Promise<{ end(): Promise<ServerView> }> {
  const first = await scrape(url, method, route);
  return {
    async end() {
      const last = await scrape(url, method, route);
      const bounds = [...last.buckets.keys()].sort((a, b) => a - b);
      const inWindow = (bound: number) => (last.buckets.get(bound) ?? 0) - (first.buckets.get(bound) ?? 0);
      const requests = bounds.length > 0 ? inWindow(bounds[bounds.length - 1]!) : 0;
      const quantile = (q: number) => {
        const bound = bounds.find((b) => inWindow(b) >= q * requests);
        return bound === undefined ? 'n/a' : bucketLabel(bound);
      };
      return {
        requests,
        p50: quantile(0.5),
        p99: quantile(0.99),
        lagP99Ms: last.lagP99S * 1000,
        lagMaxMs: last.lagMaxS * 1000,
      };
    },
  };
}
