// How a managed instance gets its worker key: the orchestrator mints a one-time exchange token for the run,
// the instance's runner trades it at POST /worker-keys/exchange.
import assert from 'node:assert/strict';
import type { Api } from './service.ts';

/** Mints an exchange token for the run with the orchestrator key; asserts the 201. */
export async function mintExchangeToken(api: Api, orchestratorKey: string, runId: string): Promise<string> {
  const minted = await api.as(orchestratorKey).post(`/orchestrator/runs/${runId}/exchange-token`);
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  return minted.body.token as string;
}

/** Trades a token as a runner does; answers the HTTP reply, so refusals can be asserted. */
export function exchange(api: Api, token: string) {
  return api.request('POST', '/worker-keys/exchange', { key: token });
}

/** The run's worker key as its instance gets it: a fresh token, traded at once. */
export async function workerKeyThroughExchange(
  api: Api,
  orchestratorKey: string,
  runId: string,
): Promise<{ id: string; key: string }> {
  const traded = await exchange(api, await mintExchangeToken(api, orchestratorKey, runId));
  assert.equal(traded.status, 201, JSON.stringify(traded.body));
  return { id: traded.body.id, key: traded.body.key };
}
