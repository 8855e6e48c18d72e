// A runner in one screen: config → start → heartbeat loop → outputs uploaded as they appear → succeed or
// fail. Run it as a managed worker would: SERVICE_SERVER_URL, SERVICE_API_KEY, SERVICE_EXPERIMENT_ID,
// SERVICE_VARIATION and SERVICE_RUN in the environment (`assay run -- <cmd>` does the same for any program).
import { writeFile } from 'node:fs/promises';
import { Client, environmentSnapshot } from '../src/client/index.ts';

const client = Client.fromEnv();
const env = process.env;
const run = client.run(env.SERVICE_EXPERIMENT_ID!, Number(env.SERVICE_VARIATION), Number(env.SERVICE_RUN));

const { config_json: config } = await run.config();
await run.start(await environmentSnapshot());
let cancelled = false;
const beat = setInterval(() => {
  run.heartbeat().then(
    (b) => (cancelled ||= b.cancel_requested),
    () => {},
  );
}, 1000);
try {
  for (let step = 1; step <= Number(config.steps ?? 3) && !cancelled; step++) {
    const file = `/tmp/assay-example-${process.pid}-step${step}.json`;
    await writeFile(file, JSON.stringify({ step, loss: 1 / step, lr: config.lr }));
    client.uploadAsync({
      kind: 'output',
      name: `metrics step ${step}`,
      run,
      files: [{ path: file, name: 'metrics.json' }],
    });
  }
  if (cancelled) await run.fail('abandoned', 'cancel requested');
  else await run.succeed(); // waits for the uploads above; raises UploadError if one failed
} catch (error) {
  await run.fail('crash', String(error));
  throw error;
} finally {
  clearInterval(beat);
  client.close();
}
