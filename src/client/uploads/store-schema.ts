import type { DatabaseSync } from 'node:sqlite';

/**
 * Phases of one upload; a failure records `error` without leaving its phase, so a resume knows where to
 * go on.
 */
export type UploadState = 'new' | 'uploading' | 'finalizing' | 'done';

/**
 * The allowed moves, as data: new (registered locally, asset not created yet) → uploading (asset created,
 * bytes moving) → finalizing (every byte stored; finalize called or about to be) → done. uploading → done is
 * a resume that finds the asset already ready.
 */
export const MOVES: Readonly<Record<UploadState, readonly UploadState[]>> = {
  new: ['uploading'],
  uploading: ['finalizing', 'done'],
  finalizing: ['done'],
  done: [],
};

const VERSION = 2;

// Paths, sizes and mtimes are what was hashed: a resume refuses to send other bytes than those.
const SCHEMA = `
CREATE TABLE uploads (
  id           TEXT PRIMARY KEY,
  server_url   TEXT NOT NULL,
  asset_id     TEXT,
  links_json   TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('new', 'uploading', 'finalizing', 'done')),
  error        TEXT,
  owner_pid    INTEGER,
  owner_host   TEXT,
  owner_token  TEXT,
  heartbeat_at INTEGER,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE INDEX uploads_by_server ON uploads (server_url, state);
CREATE TABLE components (
  upload_id    TEXT NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  path         TEXT NOT NULL,
  size         INTEGER NOT NULL,
  mtime_ms     REAL NOT NULL,
  sha256       TEXT,
  part_sha256  TEXT,
  content_type TEXT NOT NULL,
  done         INTEGER NOT NULL DEFAULT 0,
  multipart_upload_id TEXT,
  part_size    INTEGER,
  PRIMARY KEY (upload_id, name)
);
CREATE TABLE parts (
  upload_id   TEXT NOT NULL,
  component   TEXT NOT NULL,
  part_number INTEGER NOT NULL,
  PRIMARY KEY (upload_id, component, part_number),
  FOREIGN KEY (upload_id, component) REFERENCES components (upload_id, name) ON DELETE CASCADE
);
`;

/**
 * WAL lets a resuming process read while another writes; synchronous=FULL makes every committed state move
 * durable before the next byte goes out, so a part recorded done really is done even after a power cut.
 */
export function prepareDatabase(db: DatabaseSync): void {
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
  db.exec('BEGIN IMMEDIATE');
  try {
    const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    if (version === 0) db.exec(`${SCHEMA} PRAGMA user_version = ${VERSION};`);
    // Version 2 adds the parts' sha256 (a JSON array), which the store checks each part against.
    else if (version === 1)
      db.exec(`ALTER TABLE components ADD COLUMN part_sha256 TEXT; PRAGMA user_version = ${VERSION};`);
    else if (version !== VERSION)
      throw new Error(`upload store has schema version ${version}; this client knows ${VERSION}`);
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
