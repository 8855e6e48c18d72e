/** Requests as the test service logged them (`t.logs`), to count and time what reached the server. */
export interface LoggedRequest {
  reqId: string;
  method: string;
  path: string;
  query: URLSearchParams;
}

interface Line {
  msg?: string;
  reqId?: string;
  req?: { method: string; url: string };
}

function parse(line: string): Line {
  try {
    return JSON.parse(line) as Line;
  } catch {
    return {};
  }
}

/** Every request the service received, from log line `from` on, in arrival order. */
export function requests(logs: readonly string[], from = 0): LoggedRequest[] {
  const out: LoggedRequest[] = [];
  for (const line of logs.slice(from)) {
    const l = parse(line);
    if (l.msg !== 'incoming request' || !l.req || !l.reqId) continue;
    const url = new URL(l.req.url, 'http://x');
    out.push({ reqId: l.reqId, method: l.req.method, path: url.pathname, query: url.searchParams });
  }
  return out;
}

/**
 * Storage PUTs (the presigned uploads of the local backend), keyed "assetId/component#part" (part 0: a
 * single PUT).
 */
export function storagePuts(logs: readonly string[], from = 0): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests(logs, from)) {
    const match = r.method === 'PUT' ? /^\/storage\/uploads\/assets\/(.+)$/.exec(r.path) : null;
    if (!match) continue;
    const key = `${decodeURIComponent(match[1]!)}#${r.query.get('part') ?? 0}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** How many times each asset was finalized (PUT /assets/:id/finalize). */
export function finalizeCalls(logs: readonly string[], from = 0): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests(logs, from)) {
    const match = r.method === 'PUT' ? /^\/assets\/([^/]+)\/finalize$/.exec(r.path) : null;
    if (match) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
  }
  return counts;
}

/** The most requests matching `pick` the server was handling at one time (from "incoming" to "completed"). */
export function maxConcurrent(
  logs: readonly string[],
  pick: (r: LoggedRequest) => boolean,
  from = 0,
): number {
  const open = new Set<string>();
  let max = 0;
  for (const line of logs.slice(from)) {
    const l = parse(line);
    if (!l.reqId) continue;
    if (l.msg === 'incoming request' && l.req) {
      const url = new URL(l.req.url, 'http://x');
      if (pick({ reqId: l.reqId, method: l.req.method, path: url.pathname, query: url.searchParams }))
        open.add(l.reqId);
      max = Math.max(max, open.size);
    } else if (l.msg === 'request completed') {
      open.delete(l.reqId);
    }
  }
  return max;
}
