import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { unavailable } from '../http/errors.ts';
import type { StorageConfig } from '../storage/storage-config.ts';
import { contentSecurityPolicy } from './content-security-policy.ts';

/**
 * Where `vite build` puts the UI (src/web/vite.config.ts): dist/web at the repository root, which is also
 * dist/web beside dist/src when this module runs as built JavaScript.
 */
export function builtWebDir(): string {
  const base = path.resolve(import.meta.dirname, '../../..');
  return path.basename(base) === 'dist' ? path.join(base, 'web') : path.join(base, 'dist', 'web');
}

const config = { public: true };
const schema = { hide: true };

/**
 * The web UI under /ui/ (the API owns every other top-level path, so nothing here can shadow one): hashed
 * assets cached for good, index.html for every other /ui/ path (the client's routes), revalidated each time.
 */
export function webRoutes(o: { dir: string; storage: StorageConfig }) {
  const policy = contentSecurityPolicy(o.storage);
  const secure = (reply: FastifyReply) =>
    reply.headers({
      'content-security-policy': policy,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    });
  const index = path.join(o.dir, 'index.html');

  return async (app: FastifyInstance) => {
    await app.register(fastifyStatic, { root: o.dir, serve: false });

    // Only the root itself: a path the router folded into `/` (`/experiments/..`) is a missing API route.
    app.get('/', { config, schema }, (request, reply) =>
      request.raw.url === '/' || request.raw.url?.startsWith('/?')
        ? reply.redirect('/ui/', 302)
        : reply.callNotFound(),
    );
    app.get('/ui', { config, schema }, (_request, reply) => reply.redirect('/ui/', 301));

    app.get<{ Params: { '*': string } }>('/ui/assets/*', { config, schema }, (request, reply) => {
      secure(reply);
      // Vite names every asset by its content hash, so a name never changes meaning.
      return reply.sendFile(`assets/${request.params['*']}`, { maxAge: '365d', immutable: true });
    });

    app.get('/ui/*', { config, schema }, (_request, reply) => {
      if (!existsSync(index)) {
        throw unavailable(
          'web_ui_not_built',
          'the web UI is not built: `npm start` builds it, or run `npm run build:web`',
        );
      }
      secure(reply);
      void reply.header('cache-control', 'no-cache');
      return reply.sendFile('index.html', { cacheControl: false });
    });
  };
}
