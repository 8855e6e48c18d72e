import { badRequest } from './errors.ts';

/**
 * Keyset pagination cursor: the id of the last item served, opaque to callers. The query compares against
 * that row's own (created_at, id), which keeps the database's microsecond precision that a JS Date
 * would lose.
 */
export function encodeCursor(lastId: string): string {
  return Buffer.from(`v1:${lastId}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const m = /^v1:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(
    Buffer.from(cursor, 'base64url').toString('utf8'),
  );
  if (!m) throw badRequest('invalid_cursor', 'cursor is not one this server handed out');
  return m[1];
}

/**
 * A cursor over a series ordered by an integer (a metric's steps): the last one served, opaque to callers.
 */
export function encodeStepCursor(lastStep: number): string {
  return Buffer.from(`v1s:${lastStep}`).toString('base64url');
}

export function decodeStepCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const m = /^v1s:(0|[1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const step = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(step))
    throw badRequest('invalid_cursor', 'cursor is not one this server handed out');
  return step;
}

/** A cursor over runs in (n, r) order: the last run served. */
export function encodeRunCursor(n: number, r: number): string {
  return Buffer.from(`v1r:${n}.${r}`).toString('base64url');
}

export function decodeRunCursor(cursor: string | undefined): { n: number; r: number } | undefined {
  if (cursor === undefined) return undefined;
  const m = /^v1r:([1-9][0-9]{0,9})\.([1-9][0-9]{0,9})$/.exec(
    Buffer.from(cursor, 'base64url').toString('utf8'),
  );
  if (!m) throw badRequest('invalid_cursor', 'cursor is not one this server handed out');
  return { n: Number(m[1]), r: Number(m[2]) };
}

/** A cursor over text in byte order (metric keys): the last one served. */
export function encodeTextCursor(last: string): string {
  return Buffer.from(`v1t:${last}`).toString('base64url');
}

export function decodeTextCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('v1t:') || text.length === 4)
    throw badRequest('invalid_cursor', 'cursor is not one this server handed out');
  return text.slice(4);
}
