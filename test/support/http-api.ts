import { apiOver, type Api, type Reply } from './service.ts';

/** The test `Api` over real HTTP, for services running as processes (`startAssayServer`). */
export function httpApi(baseUrl: string): Api {
  const request: Api['request'] = async (method, url, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${url}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return {
      status: res.status,
      body: parsed as never,
      headers: Object.fromEntries(res.headers),
    } satisfies Reply;
  };
  return apiOver(request);
}

/** A counter or gauge of a service's `/metrics` (anonymous: tests leave ASSAY_METRICS_SCOPE unset). */
export async function metric(api: Api, name: string): Promise<number> {
  const text = (await api.request('GET', '/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Number(line.split(' ')[1]);
}

/** Whether the service listens for key revocations now, so that it caches verified keys. */
export async function listensForRevocations(api: Api): Promise<boolean> {
  return (await metric(api, 'assay_auth_listener_up')) === 1;
}
