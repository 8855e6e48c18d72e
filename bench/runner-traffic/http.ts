// A JSON client over one keep-alive undici Pool per server: the
// lowest-overhead way Node has to send the load.
import { Pool } from 'undici';

export class JsonHttp {
  readonly #pool: Pool;
  readonly #headers: Record<string, string>;
  readonly #jsonHeaders: Record<string, string>;

  /** `connections` bounds the sockets: one per simulated runner, so none waits for another's socket. */
  constructor(origin: string, connections: number, headers: Record<string, string> = {}) {
    this.#pool = new Pool(origin, {
      connections,
      pipelining: 1,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
      keepAliveTimeout: 4_000,
    });
    this.#headers = headers;
    this.#jsonHeaders = { ...headers, 'content-type': 'application/json' };
  }

  /** Sends one request and answers the parsed JSON body; any status but 2xx throws with the body. */
  async call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await this.#pool.request({
      method,
      path,
      headers: method === 'GET' ? this.#headers : this.#jsonHeaders,
      body: body === undefined ? (method === 'POST' ? '{}' : undefined) : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299)
      throw new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  /**
   * `call` for untimed setup and teardown: retried (up to 3 times) when the connection closed before any
   * answer, as uvicorn does to a keep-alive connection whose idle timer fired while its worker was busy.
   */
  async setupCall<T = any>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.call<T>(method, path, body);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (attempt >= 4 || (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET')) throw error;
      }
    }
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}

/** Runs `fn` over `items` with at most `limit` at once, in order of start; answers results in item order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
