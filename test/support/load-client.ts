import { Agent, request } from 'undici';

export interface Answer {
  status: number;
  body: any;
  /** Time from sending to the whole body read. */
  ms: number;
}

/** A request that got no HTTP answer at all (refused, reset, timed out), with when it was sent. */
export class NetworkError extends Error {
  readonly sentAt: number;
  constructor(message: string, sentAt: number, options?: ErrorOptions) {
    super(message, options);
    this.sentAt = sentAt;
  }
}

/**
 * The HTTP side of a load generator: one pooled undici Agent, bearer auth, JSON in and out, every
 * request bounded.
 */
export class LoadClient {
  readonly agent: Agent;
  private readonly baseUrl: string;
  private readonly key: string;
  private readonly timeoutMs: number;

  constructor(
    baseUrl: string,
    key: string,
    { connections = 64, timeoutMs = 15_000 }: { connections?: number; timeoutMs?: number } = {},
  ) {
    this.baseUrl = baseUrl;
    this.key = key;
    this.timeoutMs = timeoutMs;
    this.agent = new Agent({
      connections,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  /**
   * Any HTTP answer resolves (whatever its status); no answer within the timeout rejects with a NetworkError.
   */
  async call(method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown): Promise<Answer> {
    const sentAt = Date.now();
    const started = performance.now();
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const res = await request(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.body.text();
      return {
        status: res.statusCode,
        body: text ? JSON.parse(text) : undefined,
        ms: performance.now() - started,
      };
    } catch (error) {
      const e = error as Error & { code?: string };
      throw new NetworkError(`${method} ${path}: ${e.code ?? e.name}: ${e.message}`, sentAt, {
        cause: error,
      });
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** Percentiles of a sample (nearest rank), in the sample's unit. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
