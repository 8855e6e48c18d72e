import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import pino from 'pino';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { adminRoutes } from './admin/admin-routes.ts';
import { assetRoutes } from './assets/asset-routes.ts';
import { assertAcceptsUpload } from './assets/asset-service.ts';
import { searchRoutes } from './search/search-routes.ts';
import { LocalStorage } from './storage/local-storage.ts';
import { localStorageRoutes } from './storage/local-storage-routes.ts';
import type { ObjectStorage } from './storage/object-storage.ts';
import { apiKeyRoutes } from './api-keys/api-key-routes.ts';
import { installAuth } from './auth/auth-plugin.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import type { ServiceConfig } from './config.ts';
import type { Db } from './db/database.ts';
import { experimentRoutes } from './experiments/experiment-routes.ts';
import { healthRoutes } from './health-routes.ts';
import { metricRoutes } from './metrics/metric-routes.ts';
import { handleFrameworkError, installErrorHandling } from './http/error-handler.ts';
import { installMetrics } from './http/metrics.ts';
import { docsUiOptions, openapiOptions } from './http/openapi.ts';
import { documentAuthLimit, documentBodyErrors } from './http/schemas.ts';
import { requestIdFor } from './http/request-id.ts';
import type { Orchestrator } from '../orchestrator/orchestrator.ts';
import { orchestratorRoutes } from './orchestration/orchestrator-routes.ts';
import { provisionRoutes } from './orchestration/provision-routes.ts';
import { workerKeyExchangeRoutes } from './orchestration/worker-key-exchange-routes.ts';
import { meRoutes } from './organizations/me-routes.ts';
import { organizationRoutes } from './organizations/organization-routes.ts';
import type { RunEvents } from './runs/run-events.ts';
import { runControlWaits } from './runs/run-control-waits.ts';
import { runRoutes } from './runs/run-routes.ts';
import { logNotices } from './logs/log-notices.ts';
import { runLogRoutes, RUN_LOG_WAITS } from './logs/run-log-routes.ts';
import { earlyStopping } from './sweeps/early-stopping/early-stopping.ts';
import { sweepRoutes } from './sweeps/sweep-routes.ts';
import { trialRoutes } from './sweeps/trial-routes.ts';
import { configPolicy } from './variations/config-policy.ts';
import { variationRoutes } from './variations/variation-routes.ts';
import { builtWebDir, webRoutes } from './web/web-routes.ts';

export interface AppDeps {
  config: ServiceConfig;
  db: Db;
  storage: ObjectStorage;
  /** pino options or an instance; tests pass `false` or a capturing stream. */
  logger?: FastifyServerOptions['logger'];
  /** Starts and signals managed-run and sweep workflows; without one, provision and sweeps answer 503. */
  orchestrator?: Orchestrator;
  /** How the runs feature tells the orchestration side of a moved run (`service.ts` wires it). */
  runEvents: RunEvents;
  /** The built web UI served under /ui/; defaults to dist/web. */
  webDir?: string;
}

const KEY_IN_PATH = /sk_(user|agent|worker|exchange)_[^/]*/g;

/**
 * The service's pino options: credentials redacted, query strings and database parameters dropped. Exported
 * so tests that check what the service logs can capture exactly these, with a stream of their own.
 */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      // Paths only: query strings may carry signatures of presigned URLs. A key pasted where an id belongs
      // (DELETE /api-keys/<the key itself>) is masked, or the request log would keep it.
      req: (req: { method: string; url: string; id: string }) => ({
        method: req.method,
        path: req.url.split('?')[0]!.replace(KEY_IN_PATH, 'sk_$1_[redacted]'),
        id: req.id,
      }),
      // Database errors carry the statement's parameters, which may hold user data or key material.
      err: (err: Error & { params?: unknown }) => {
        const { params: _params, ...rest } = pino.stdSerializers.err(err) as ReturnType<
          typeof pino.stdSerializers.err
        > & { params?: unknown };
        return rest;
      },
    },
  };
}

/**
 * Builds the whole HTTP API as a Fastify instance that never listens: `server.ts` and tests decide how to
 * serve it.
 */
export async function buildApp({
  config,
  db,
  storage,
  logger,
  orchestrator,
  runEvents,
  webDir = builtWebDir(),
}: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ?? loggerOptions(config.logLevel),
    genReqId: requestIdFor,
    bodyLimit: config.bodyLimitBytes,
    // Node's default (16 KiB) is smaller than a query the contract allows: 50 metric keys of up to 250
    // characters, percent-encoded, answered 431 before any route could check them.
    http: { maxHeaderSize: 64 * 1024 },
    ajv: {
      // `discriminator`: a tagged union (a sweep's `strategy`) is checked against the member its tag names.
      customOptions: {
        removeAdditional: false,
        coerceTypes: 'array',
        useDefaults: true,
        allErrors: false,
        discriminator: true,
      },
    },
    // A metric key (up to 250 characters) travels URL-encoded in the path: up to 3 bytes a character.
    routerOptions: { maxParamLength: 800 },
    frameworkErrors: handleFrameworkError,
  });
  app.addHook('onRoute', documentBodyErrors);
  app.addHook('onRoute', documentAuthLimit);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  // An empty body sent as JSON (curl -X POST -H 'content-type: application/json') means "no fields", not
  // malformed JSON.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else void parseJson(request, body as string, done);
  });
  // A POST without a body validates as an empty object: routes with nothing to send accept it, others say
  // what is missing.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'DELETE')
      request.body = {};
  });
  installErrorHandling(app);
  const metrics = installMetrics(app, config.metricsScope);

  await app.register(swagger, openapiOptions(config));
  await app.register(swaggerUi, docsUiOptions(config));
  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  const authenticator = createAuthenticator(config, db, app.log, metrics);
  app.addHook('onClose', () => authenticator.close());
  installAuth(app, authenticator);

  await app.register(healthRoutes(db, storage));
  await app.register(experimentRoutes(db, storage));
  await app.register(variationRoutes(db, configPolicy(config)));
  const controlWaits = runControlWaits(
    db,
    { maxWaiting: config.runControlMaxWaiting, registry: metrics },
    app.log,
  );
  // Before the server waits for requests in flight: waiting control polls answer now instead of holding it.
  app.addHook('preClose', () => controlWaits.close());
  await app.register(runRoutes(db, runEvents, controlWaits));
  const logWaits = runControlWaits(
    db,
    { maxWaiting: config.runControlMaxWaiting, registry: metrics, subject: RUN_LOG_WAITS },
    app.log,
  );
  app.addHook('preClose', () => logWaits.close());
  const notices = logNotices(db, app.log);
  app.addHook('onClose', () => notices.close());
  await app.register(runLogRoutes(db, config, logWaits, notices));
  await app.register(provisionRoutes(db, orchestrator, runEvents, configPolicy(config)));
  // Stored metrics are told to the sweeps' early stopping, which stops a pruned run through runEvents.
  await app.register(metricRoutes(db, config, earlyStopping(db, runEvents)));
  await app.register(sweepRoutes(db, orchestrator, configPolicy(config)));
  await app.register(orchestratorRoutes(db, config, authenticator, orchestrator, runEvents));
  await app.register(trialRoutes(db, configPolicy(config), runEvents));
  await app.register(apiKeyRoutes(db, config, authenticator));
  await app.register(workerKeyExchangeRoutes(db, config, authenticator));
  await app.register(organizationRoutes(db));
  await app.register(meRoutes(db));
  await app.register(adminRoutes(db, config, authenticator));
  await app.register(assetRoutes({ db, storage, config }));
  await app.register(searchRoutes(db, config.searchEnabled));
  await app.register(webRoutes({ dir: webDir, storage: config.storage }));
  if (storage instanceof LocalStorage)
    await app.register(
      localStorageRoutes(storage, { assertWritable: (key) => assertAcceptsUpload(db, key) }),
    );
  return app;
}
