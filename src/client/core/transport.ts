import { APIConnectionError, APITimeoutError, fromResponse, type HeadersLike } from './errors.ts';

/** What Transport asks of a fetch: the global one fits, and so does the lighter one of node-fetch.ts. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string | undefined; signal: AbortSignal },
) => Promise<FetchLikeResponse>;

export interface FetchLikeResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: HeadersLike;
  text(): Promise<string>;
}

export interface TransportOptions {
  serverUrl: string;
  apiKey: string;
  /** Seconds. */
  timeout: number;
  fetch?: FetchLike;
}

export interface RequestOptions {
  body?: unknown;
  /** Overrides the per-request timeout, in seconds. */
  timeout?: number;
  /** Abandons the request (it rejects with APITimeoutError, as a timeout does). */
  signal?: AbortSignal;
}

/**
 * One HTTP exchange per call: bearer auth, JSON in and out, the per-request timeout, and every non-2xx mapped
 * to its typed error. No retries and no backoff: callers decide what to repeat.
 */
export class Transport {
  readonly serverUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #fetch: FetchLike;

  constructor(options: TransportOptions) {
    this.serverUrl = options.serverUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeout * 1000;
    // Called as a method (this.#fetch(…)), the global fetch would get the Transport as `this`, which browsers
    // refuse ("Illegal invocation"); the arrow keeps the global receiver.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The per-request timeout, in seconds; a long-poll's is its wait plus this. */
  get timeoutS(): number {
    return this.#timeoutMs / 1000;
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = `${this.serverUrl}${path}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json',
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const timeoutMs = options.timeout !== undefined ? options.timeout * 1000 : this.#timeoutMs;
    let response: FetchLikeResponse;
    let text: string;
    try {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
      response = await this.#fetch(url, { method, headers, body, signal });
      text = await response.text();
    } catch (error) {
      if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new APITimeoutError({
          message: `${method} ${path}: no answer within ${timeoutMs / 1000} s`,
          cause: error,
        });
      }
      const reason = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new APIConnectionError({
        message: `${method} ${path}: cannot reach ${this.serverUrl} (${reason?.code ?? reason?.message ?? (error as Error).message})`,
        cause: error,
      });
    }
    if (!response.ok) throw fromResponse(response.status, text, response.headers);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }
}
