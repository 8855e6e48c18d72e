// A managed instance is started with a one-time exchange token, never with a key: `assay run` trades it for
// its run's worker key before anything else, so what the instance's launch data holds is worthless from
// then on.
import { inspectSettings } from '../client/config.ts';
import { APIConnectionError, ServerError } from '../client/index.ts';
import { nodeFetch, Transport } from '../client/transport.ts';
import { errorLine } from './output.ts';

/** The variable a managed instance's runner finds its exchange token in. */
export const EXCHANGE_TOKEN_VARIABLE = 'SERVICE_EXCHANGE_TOKEN';

// An instance may run its boot script before its network or the service answers; a failed try that never
// reached the service leaves the token unspent, and one that did is answered 401 on the next try.
const PATIENCE_MS = 60_000;

/**
 * Trades SERVICE_EXCHANGE_TOKEN, when set, for the run's worker key and puts that key in SERVICE_API_KEY
 * (where the client and COMMAND find it, as for self-managed runners); the spent token leaves
 * the environment.
 */
export async function exchangeWorkerKey(env: NodeJS.ProcessEnv): Promise<void> {
  const token = env[EXCHANGE_TOKEN_VARIABLE]?.trim();
  if (!token) return;
  const { settings } = inspectSettings({}, { env });
  const transport = new Transport({
    serverUrl: settings.serverUrl,
    apiKey: token,
    timeout: settings.timeout,
    fetch: nodeFetch,
  });
  const deadline = Date.now() + PATIENCE_MS;
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    try {
      const { key } = await transport.post<{ key: string }>('/worker-keys/exchange');
      env.SERVICE_API_KEY = key;
      delete env[EXCHANGE_TOKEN_VARIABLE];
      return;
    } catch (error) {
      const transient = error instanceof APIConnectionError || error instanceof ServerError;
      if (!transient || Date.now() + delay > deadline) throw error;
      process.stderr.write(
        `assay: could not trade the exchange token yet (${errorLine(error)}); trying again in ${delay / 1000} s\n`,
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
