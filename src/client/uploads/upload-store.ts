import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { AssetLinks } from '../resources/assets.ts';
import { mayClaim, type Owner } from './upload-owner.ts';
import { MOVES, prepareDatabase, type UploadState } from './store-schema.ts';

export interface StoredComponent {
  name: string;
  path: string;
  size: number;
  mtimeMs: number;
  sha256: string | null;
  /** The sha256 of each part of `UPLOAD_PART_BYTES` (null for a file of one part, or not hashed yet). */
  partSha256: string[] | null;
  contentType: string;
  done: boolean;
  multipartUploadId: string | null;
  partSize: number | null;
  /** Part numbers a storage PUT answered 2xx for. */
  doneParts: Set<number>;
}

export interface StoredUpload {
  id: string;
  serverUrl: string;
  assetId: string | null;
  links: AssetLinks;
  state: UploadState;
  error: string | null;
  components: StoredComponent[];
}

export type NewComponent = Pick<StoredComponent, 'name' | 'path' | 'size' | 'mtimeMs' | 'contentType'>;

type Row = Record<string, SQLInputValue>;

const KEEP_DONE_MS = 7 * 24 * 3600 * 1000;

/**
 * The crash-recovery store (SQLite, one file shared by every process of the user): what each upload is, how
 * far it got, and which live process works on it. Every write is its own durable transaction.
 */
export class UploadStore {
  readonly #db: DatabaseSync;

  private constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Opens (creating, private to the user) the store at `file`. */
  static open(file: string): UploadStore {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    closeSync(openSync(file, 'a', 0o600));
    chmodSync(file, 0o600); // the -wal and -shm files take the database file's mode
    const db = new DatabaseSync(file, { timeout: 10_000 });
    prepareDatabase(db);
    // Finished uploads are kept a while for `assay` to show, then dropped so the store stays small.
    db.prepare(`DELETE FROM uploads WHERE state = 'done' AND updated_at < ?`).run(Date.now() - KEEP_DONE_MS);
    return new UploadStore(db);
  }

  get isOpen(): boolean {
    return this.#db.isOpen;
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  /** Records an upload and its components, owned by `owner`, before any byte moves. */
  register(
    u: { id: string; serverUrl: string; links: AssetLinks; components: NewComponent[] },
    owner: Owner,
  ): void {
    const now = Date.now();
    this.#transaction(() => {
      this.#db
        .prepare(
          `INSERT INTO uploads (id, server_url, links_json, state, owner_pid, owner_host, owner_token, heartbeat_at, created_at, updated_at) VALUES (?, ?, ?, 'new', ?, ?, ?, ?, ?, ?)`,
        )
        .run(u.id, u.serverUrl, JSON.stringify(u.links), owner.pid, owner.host, owner.token, now, now, now);
      const insert = this.#db.prepare(
        'INSERT INTO components (upload_id, name, path, size, mtime_ms, content_type) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const c of u.components) insert.run(u.id, c.name, c.path, c.size, c.mtimeMs, c.contentType);
    });
  }

  get(id: string): StoredUpload | undefined {
    const row = this.#db.prepare('SELECT * FROM uploads WHERE id = ?').get(id) as Row | undefined;
    if (!row) return undefined;
    const parts = this.#db
      .prepare('SELECT component, part_number FROM parts WHERE upload_id = ?')
      .all(id) as Row[];
    const components = (
      this.#db.prepare('SELECT * FROM components WHERE upload_id = ? ORDER BY rowid').all(id) as Row[]
    ).map((c) => ({
      name: c.name as string,
      path: c.path as string,
      size: c.size as number,
      mtimeMs: c.mtime_ms as number,
      sha256: c.sha256 as string | null,
      partSha256: c.part_sha256 === null ? null : (JSON.parse(c.part_sha256 as string) as string[]),
      contentType: c.content_type as string,
      done: c.done === 1,
      multipartUploadId: c.multipart_upload_id as string | null,
      partSize: c.part_size as number | null,
      doneParts: new Set(parts.filter((p) => p.component === c.name).map((p) => p.part_number as number)),
    }));
    return {
      id,
      serverUrl: row.server_url as string,
      assetId: row.asset_id as string | null,
      links: JSON.parse(row.links_json as string) as AssetLinks,
      state: row.state as UploadState,
      error: row.error as string | null,
      components,
    };
  }

  /** Local ids of this server's uploads that are not done, oldest first (whoever holds them). */
  incomplete(serverUrl: string): string[] {
    const rows = this.#db
      .prepare(`SELECT id FROM uploads WHERE server_url = ? AND state <> 'done' ORDER BY created_at, id`)
      .all(serverUrl) as Row[];
    return rows.map((r) => r.id as string);
  }

  /**
   * Takes an upload over when nobody live holds it; atomic across processes (compare-and-set on the holder).
   */
  claim(id: string, owner: Owner, now = Date.now()): boolean {
    return this.#transaction(() => {
      const row = this.#db
        .prepare(
          `SELECT owner_pid, owner_host, owner_token, heartbeat_at FROM uploads WHERE id = ? AND state <> 'done'`,
        )
        .get(id) as Row | undefined;
      if (!row) return false;
      const lease = {
        ownerPid: row.owner_pid as number | null,
        ownerHost: row.owner_host as string | null,
        ownerToken: row.owner_token as string | null,
        heartbeatAt: row.heartbeat_at as number | null,
      };
      if (!mayClaim(lease, owner, now)) return false;
      this.#db
        .prepare(
          'UPDATE uploads SET owner_pid = ?, owner_host = ?, owner_token = ?, heartbeat_at = ?, error = NULL, updated_at = ? WHERE id = ?',
        )
        .run(owner.pid, owner.host, owner.token, now, now, id);
      return true;
    });
  }

  /** Refreshes the lease of every upload `owner` holds. */
  heartbeat(owner: Owner): void {
    this.#db
      .prepare('UPDATE uploads SET heartbeat_at = ? WHERE owner_token = ?')
      .run(Date.now(), owner.token);
  }

  /**
   * Lets go of an upload (finished, failed or closing), recording the failure if any; it stays resumable
   * unless done.
   */
  release(id: string, owner: Owner, error?: string): void {
    this.#db
      .prepare(
        'UPDATE uploads SET owner_pid = NULL, owner_host = NULL, owner_token = NULL, error = ?, updated_at = ? WHERE id = ? AND owner_token = ?',
      )
      .run(error ?? null, Date.now(), id, owner.token);
  }

  setSha256(id: string, component: string, sha256: string, partSha256: string[] | null): void {
    this.#db
      .prepare('UPDATE components SET sha256 = ?, part_sha256 = ? WHERE upload_id = ? AND name = ?')
      .run(sha256, partSha256 && JSON.stringify(partSha256), id, component);
  }

  /**
   * The asset exists on the server: remember its id and the multipart uploads it started, and start
   * moving bytes.
   */
  created(
    id: string,
    assetId: string,
    multipart: Record<string, { uploadId: string; partSize: number }>,
  ): void {
    this.#transaction(() => {
      this.#db.prepare('UPDATE uploads SET asset_id = ? WHERE id = ?').run(assetId, id);
      for (const [name, m] of Object.entries(multipart)) this.setMultipart(id, name, m.uploadId, m.partSize);
      this.move(id, 'new', 'uploading');
    });
  }

  /**
   * Records a component's multipart upload; a different upload id than before voids the parts done under the
   * old one.
   */
  setMultipart(id: string, component: string, uploadId: string, partSize: number): void {
    this.#transaction(() => {
      const row = this.#db
        .prepare('SELECT multipart_upload_id FROM components WHERE upload_id = ? AND name = ?')
        .get(id, component) as Row | undefined;
      if (row?.multipart_upload_id !== uploadId)
        this.#db.prepare('DELETE FROM parts WHERE upload_id = ? AND component = ?').run(id, component);
      this.#db
        .prepare(
          'UPDATE components SET multipart_upload_id = ?, part_size = ? WHERE upload_id = ? AND name = ?',
        )
        .run(uploadId, partSize, id, component);
    });
  }

  partDone(id: string, component: string, partNumber: number): void {
    this.#db
      .prepare('INSERT OR IGNORE INTO parts (upload_id, component, part_number) VALUES (?, ?, ?)')
      .run(id, component, partNumber);
  }

  componentDone(id: string, component: string): void {
    this.#db.prepare('UPDATE components SET done = 1 WHERE upload_id = ? AND name = ?').run(id, component);
  }

  /** Moves an upload between phases, refusing any move MOVES does not list (a bug, never a user error). */
  move(id: string, from: UploadState, to: UploadState): void {
    if (!MOVES[from].includes(to)) throw new Error(`upload store: no move from ${from} to ${to}`);
    const { changes } = this.#db
      .prepare('UPDATE uploads SET state = ?, updated_at = ? WHERE id = ? AND state = ?')
      .run(to, Date.now(), id, from);
    if (changes !== 1) throw new Error(`upload store: upload ${id} is not ${from}`);
  }

  #transaction<T>(body: () => T): T {
    if (this.#db.isTransaction) return body();
    this.#db.exec('BEGIN IMMEDIATE'); // takes the write lock first, so a read-then-write cannot race another process
    try {
      const result = body();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }
}
