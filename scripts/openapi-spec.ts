// Prints the service's /openapi.json without a network server: the app is built in-process on a throwaway
// embedded PGlite database and asked through app.inject, as test/server/openapi-lint.test.ts does. The
// Python SDK's model generator (sdk/python/scripts/generate_models.py) reads it from stdout.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../src/server/config.ts';
import { createService } from '../src/server/service.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'assay-openapi-'));
try {
  // A fixed public URL: the document's `servers` would otherwise differ per run. No orchestrator: its routes
  // and schemas are there all the same, and nothing starts a Temporal server.
  const config = loadConfig({
    ASSAY_DATA_DIR: dataDir,
    ASSAY_PUBLIC_URL: 'http://127.0.0.1:8080',
    ASSAY_ORCHESTRATOR: 'off',
  });
  const quiet = new Writable({ write: (_chunk, _enc, done) => done() });
  const service = await createService(config, { logger: { level: 'warn', stream: quiet } as never });
  try {
    const res = await service.app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}`);
    process.stdout.write(`${JSON.stringify(JSON.parse(res.body), null, 2)}\n`);
  } finally {
    await service.close();
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
