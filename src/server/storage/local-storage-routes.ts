import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from '../auth/auth-plugin.ts'; // the `public` route config
import { AppError } from '../http/errors.ts';
import { contentDisposition } from './content-disposition.ts';
import type { LocalStorage } from './local-storage.ts';

type Query = Record<string, unknown>;

/**
 * The local backend's half of the presigned-URL protocol: public PUT and GET/HEAD on `/storage/<key>`,
 * authorised by the URL's signature (and `assertWritable`, for writes). Register it as a plain (encapsulated)
 * plugin, never through fastify-plugin: it replaces the body parsers for its own routes only.
 */
export function localStorageRoutes(
  storage: LocalStorage,
  o: {
    /** Throws (an AppError) to refuse a validly signed write, e.g. to a finalized asset. */
    assertWritable?: (key: string) => Promise<void>;
  } = {},
) {
  return async function localStorageRoutesPlugin(app: FastifyInstance): Promise<void> {
    // No parser reads the body: the handler streams `request.raw` to disk, so bodyLimit never applies.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const config = { public: true };
    const schema = { hide: true };

    app.put('/storage/*', { config, schema }, async (request, reply) => {
      try {
        const key = keyOf(request);
        const grant = storage.verify('PUT', key, request.query as Query);
        if (grant.size === undefined)
          throw new AppError(403, 'signature_invalid', 'the URL does not grant an upload');
        const declared = request.headers['content-length'];
        if (declared !== undefined && Number(declared) !== grant.size) {
          throw new AppError(
            400,
            'size_mismatch',
            `Content-Length is ${declared}; the URL was signed for ${grant.size} bytes`,
          );
        }
        await o.assertWritable?.(key);
        // The iterator must not destroy the request on error, or the socket dies before the 400 is sent.
        const body = request.raw.iterator({ destroyOnReturn: false });
        if (grant.uploadId !== undefined && grant.part !== undefined) {
          if (!(await storage.uploadExists(key, grant.uploadId)))
            throw new AppError(404, 'upload_not_found', 'the multipart upload is complete or unknown');
          await storage.writeAtomically(storage.partPath(key, grant.uploadId, grant.part), body, grant.size);
        } else {
          await storage.writeObject(key, body, grant.size);
        }
        return reply.status(200).send();
      } catch (error) {
        // Whatever the client still sends is not read: answer, then drop the connection.
        if (!request.raw.readableEnded) void reply.header('connection', 'close');
        throw error;
      }
    });

    app.route({
      method: ['GET', 'HEAD'],
      url: '/storage/*',
      config,
      schema,
      exposeHeadRoute: false,
      handler: (request, reply) => serve(storage, request, reply),
    });
  };
}

function keyOf(request: FastifyRequest): string {
  // find-my-way has already percent-decoded the wildcard; the signature then pins the exact key.
  return (request.params as { '*': string })['*'];
}

async function serve(
  storage: LocalStorage,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const key = keyOf(request);
  const grant = storage.verify('GET', key, request.query as Query);
  const { fh, size } = await storage.openForRead(key);
  const range = parseRange(request.headers.range, size);
  if (range === 'unsatisfiable') {
    await fh.close();
    return reply
      .status(416)
      .header('content-range', `bytes */${size}`)
      .send({ error: { code: 'range_not_satisfiable', message: `the object has ${size} bytes` } });
  }
  void reply
    .header('content-type', 'application/octet-stream')
    .header('accept-ranges', 'bytes')
    .header('cache-control', 'private, no-store');
  if (grant.filename) void reply.header('content-disposition', contentDisposition(grant.filename));
  const [start, end] = range ?? [0, size - 1];
  void reply.header('content-length', String(end - start + 1));
  if (range) void reply.status(206).header('content-range', `bytes ${start}-${end}/${size}`);
  if (request.method === 'HEAD' || size === 0) {
    await fh.close();
    return reply.send();
  }
  return reply.send(fh.createReadStream({ start, end }));
}

/**
 * One `bytes=a-b`, `bytes=a-` or `bytes=-n` range; anything else (several ranges, other units, garbage) is
 * ignored and the whole object is served, as RFC 9110 allows.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): [number, number] | 'unsatisfiable' | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    if (match[2] !== '' && Number(match[2]) < start) return undefined; // malformed, so ignored
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  return start >= size || end < start ? 'unsatisfiable' : [start, end];
}
