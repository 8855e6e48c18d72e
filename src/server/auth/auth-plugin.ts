import type { FastifyInstance } from 'fastify';
import { forbidden, unauthorized } from '../http/errors.ts';
import { parseToken } from './api-key-token.ts';
import type { Authenticator } from './authenticator.ts';
import type { Principal } from './principal.ts';
import type { Scope } from '@assay/contract';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes open to anyone (health, docs, signed storage URLs). */
    public?: boolean;
    /** The scope a caller's key must hold; with a list, every one of them. */
    scope?: Scope | readonly Scope[];
    /**
     * Routes a worker key may call at all: its run's and its assets' (their services keep it to that run).
     */
    workerKeys?: boolean;
    /**
     * The one route that takes a one-time exchange token (`sk_exchange_…`) as its bearer, and nothing else.
     */
    exchangeToken?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
    /**
     * The bearer of an `exchangeToken` route, verified and spent by the route itself (a single-use write).
     */
    exchangeToken: string;
  }
}

const BEARER = /^Bearer +([\x21-\x7e]{1,8192})$/i;

/** Authenticates before the body is parsed, so an anonymous caller learns nothing from validation errors. */
export function installAuth(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('exchangeToken', '');
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    // Unknown routes fall through to the 404 handler; the docs UI serves only static, public pages.
    if (config.public || !request.routeOptions.url || request.routeOptions.url.startsWith('/docs')) return;
    const header = request.headers.authorization;
    const match = header ? BEARER.exec(header) : null;
    if (!match) {
      void reply.header('www-authenticate', 'Bearer');
      throw unauthorized(
        header
          ? 'Authorization header must be "Bearer <token>"'
          : 'missing Authorization: Bearer <token> header',
      );
    }
    if (config.exchangeToken) {
      if (parseToken(match[1]!)?.kind === 'exchange') {
        request.exchangeToken = match[1]!;
        return;
      }
      // A real key is still checked (a bad one answers 401 and counts as a failure), then refused.
      await authenticator.authenticate(match[1]!, request.ip);
      throw forbidden(
        'exchange_token_required',
        'this endpoint takes a managed run’s one-time exchange token (sk_exchange_…), not an API key',
      );
    }
    request.principal = await authenticator.authenticate(match[1]!, request.ip);
    const needed: readonly Scope[] =
      config.scope === undefined ? [] : typeof config.scope === 'string' ? [config.scope] : config.scope;
    const missing = needed.filter((s) => !request.principal.scopes.has(s));
    if (missing.length > 0) {
      throw forbidden(
        'insufficient_scope',
        `this call needs the ${missing.join(' and ')} scope${missing.length > 1 ? 's' : ''}, which the key does not hold`,
      );
    }
    // Worker keys travel in instance user data: whatever leaks one must reach no more than its run
    // and assets.
    if (request.principal.via === 'worker' && !config.workerKeys) {
      throw forbidden('worker_key_restricted', "a worker key reaches only its run's endpoints and assets");
    }
    // Orchestrator keys are for the /orchestrator/* endpoints alone, not even the scope-free ones such
    // as /v1/me.
    if (request.principal.scopes.has('orchestrate') && !needed.includes('orchestrate')) {
      throw forbidden(
        'orchestrator_key_restricted',
        'an orchestrator key reaches only the /orchestrator/* endpoints',
      );
    }
  });
}
