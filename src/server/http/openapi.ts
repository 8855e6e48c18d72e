import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceConfig } from '../config.ts';

type Schema = { required?: string[]; minProperties?: number; anyOf?: unknown[]; oneOf?: unknown[] };
type Operation = { requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> } };
type Document = { paths?: Record<string, Record<string, Operation>> };

/**
 * A body the service accepts leaving out entirely: an absent body validates as `{}` (see the preValidation
 * hook in app.ts), so any object schema that `{}` satisfies. Fastify's swagger marks every body
 * required regardless.
 */
function acceptsNoBody(schema: Schema | undefined): boolean {
  if (!schema || schema.anyOf || schema.oneOf) return false;
  return (schema.required ?? []).length === 0 && (schema.minProperties ?? 0) === 0;
}

/** Marks the request bodies a caller may leave out as optional, so generated clients need not send `{}`. */
export function markOptionalBodies<T extends Document>(document: T): T {
  for (const methods of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      const body = operation.requestBody;
      if (body && acceptsNoBody(body.content?.['application/json']?.schema)) body.required = false;
    }
  }
  return document;
}

/**
 * Drops a `discriminator` whose `oneOf` members are inline (a space's distributions, early stopping's kinds):
 * OpenAPI lets one select only named ($ref) members, and those schemas carry no `$id` to be named by (Ajv 8
 * refuses one `$id` twice in a body). The validator keeps it (the document is swagger's copy of the
 * schemas): it checks a value against the member its tag names.
 */
export function dropInlineDiscriminators<T>(node: T): T {
  if (Array.isArray(node)) node.forEach(dropInlineDiscriminators);
  else if (typeof node === 'object' && node !== null) {
    const schema = node as { discriminator?: unknown; oneOf?: unknown[] };
    if (schema.discriminator && schema.oneOf?.some((m) => !(m as { $ref?: string }).$ref))
      delete schema.discriminator;
    Object.values(node).forEach(dropInlineDiscriminators);
  }
  return node;
}

/**
 * The OpenAPI document's frame; the paths come from the routes' schemas, which are the contract's. Every
 * operation carries an operationId named after the client method that calls it (camelCase, verb first:
 * `createExperiment`, `heartbeatRun`), so generated clients get the same names.
 */
export function openapiOptions(config: ServiceConfig): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Assay API',
        version: '0.1.0',
        description: 'Experiments, variations, runs, sweeps, assets, search, API keys and organizations.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: config.publicUrl, description: 'this service (ASSAY_PUBLIC_URL)' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (sk_user_…, sk_agent_…, sk_worker_…) or an identity-provider access token',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transformObject: (documents) =>
      'openapiObject' in documents
        ? dropInlineDiscriminators(markOptionalBodies(documents.openapiObject as Document))
        : documents.swaggerObject,
  };
}

// The one inline style Swagger UI's bundle applies as it starts; test/web/docs-ui.test.ts fails if an upgrade
// of @fastify/swagger-ui changes it (the browser then names the new hash).
const SWAGGER_UI_INLINE_STYLE = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w=';

/**
 * The docs UI's policy, as strict as the web UI's: Swagger UI's scripts and styles from this origin only (no
 * inline script, no eval; its one inline style by hash), "Try it out" calls to this origin and the public
 * URL, no framing, no plugins.
 */
export function docsContentSecurityPolicy(publicUrl: string): string {
  const connect = new Set(["'self'", new URL(publicUrl).origin]);
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' '${SWAGGER_UI_INLINE_STYLE}'`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src ${[...connect].join(' ')}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** Swagger UI at /docs: public pages of this origin, so they carry the web UI's guards. */
export function docsUiOptions(config: ServiceConfig): FastifySwaggerUiOptions {
  return {
    routePrefix: '/docs',
    // No validator badge: it would send the document to a third party and need its origin in the policy.
    uiConfig: { docExpansion: 'list', validatorUrl: null },
    staticCSP: docsContentSecurityPolicy(config.publicUrl),
    uiHooks: {
      onRequest(_request: FastifyRequest, reply: FastifyReply, done: () => void) {
        void reply.headers({
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          'cross-origin-opener-policy': 'same-origin',
        });
        done();
      },
    },
  };
}
