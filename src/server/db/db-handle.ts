/**
 * One Postgres dialect, two drivers: node-postgres against a real server, or PGlite (Postgres compiled to
 * WebAssembly, in-process) for the embedded default. Repositories see only this interface.
 */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

/** A handle inside a transaction; functions that lock rows take this type, not `Db`. */
export interface Tx extends Queryable {
  readonly inTransaction: true;
  /** Runs a multi-statement SQL script without parameters (a migration file, whole). */
  exec(sql: string): Promise<void>;
}

/** What a LISTEN on one channel reports; `onListening` and `onLost` alternate, starting with either. */
export interface NoticeHandlers {
  /** A NOTIFY on the channel, with its payload. */
  onNotify(payload: string): void;
  /**
   * Listening (again): every notice committed from now on arrives; any committed before may have been missed.
   */
  onListening(): void;
  /** Not listening (the session ended, or could not be opened); notices go unheard until `onListening`. */
  onLost(error: Error): void;
}

export interface Db extends Queryable {
  readonly driver: 'postgres' | 'pglite';
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** LISTENs on a channel until closed, reopening a lost session by itself. Close it before the database. */
  listen(channel: string, handlers: NoticeHandlers): { close(): Promise<void> };
  close(): Promise<void>;
}

// A lone UTF-16 surrogate has no UTF-8 form: both drivers would store U+FFFD in its place without a word.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const hasLoneSurrogate = (v: unknown): boolean =>
  typeof v === 'string' ? LONE_SURROGATE.test(v) : Array.isArray(v) && v.some(hasLoneSurrogate);

/**
 * Refuses text parameters that cannot be stored as given, with the SQLSTATE Postgres uses for text that is
 * not UTF-8.
 */
export function storableParams(params: readonly unknown[] | undefined): unknown[] | undefined {
  if (params?.some(hasLoneSurrogate)) {
    const error = new Error('text contains a lone UTF-16 surrogate, which has no UTF-8 form');
    throw Object.assign(error, { code: '22021' });
  }
  return params as unknown[] | undefined;
}
