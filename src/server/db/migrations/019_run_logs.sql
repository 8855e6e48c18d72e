-- A run's console log (src/server/logs): the lines its program printed, in chunks as the runner sent them,
-- each chunk's lines deflated together (JSON lines, see run-log-codec.ts). A chunk is keyed by its first
-- seq; the service stores only the seqs no stored chunk holds, so a resent or overlapping chunk adds
-- nothing twice. Why the database and not the object store: docs/run-logs.md, with the figures.
CREATE TABLE run_log_chunks (
  run_id uuid NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  first_seq bigint NOT NULL CHECK (first_seq >= 1),
  last_seq bigint NOT NULL,
  -- The lines' text in UTF-8 plus one line break each, before compression: what the cap counts.
  raw_bytes bigint NOT NULL CHECK (raw_bytes >= 0),
  body bytea NOT NULL,
  PRIMARY KEY (run_id, first_seq),
  CHECK (last_seq >= first_seq)
);

-- One row per run that logged: what it holds and what the per-run cap (ASSAY_RUN_LOG_MAX_MB) dropped. The
-- head is the chunks kept from the start (up to half the cap, closed once a chunk does not fit); past it the
-- tail keeps the newest chunks within the other half, and the oldest tail chunks are dropped, so the dropped
-- seqs are one range: head_last_seq + 1 … dropped_through.
CREATE TABLE run_logs (
  run_id uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  last_seq bigint NOT NULL DEFAULT 0,
  lines bigint NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0,
  head_bytes bigint NOT NULL DEFAULT 0,
  -- NULL while the head is open.
  head_last_seq bigint,
  dropped_through bigint NOT NULL DEFAULT 0,
  dropped_lines bigint NOT NULL DEFAULT 0,
  dropped_bytes bigint NOT NULL DEFAULT 0
);

-- The body is deflated already: kept out of line as it is, not compressed a second time.
ALTER TABLE run_log_chunks ALTER COLUMN body SET STORAGE EXTERNAL;

-- A log follow (GET …/logs?wait_s=) waits on the replica it reached and wakes on a notice naming its run on
-- the channel every replica LISTENs on (RUN_LOG_CHANNEL in src/server/logs/run-log-repository.ts; payload:
-- run ids, comma-separated). The service announces stored chunks itself, a few milliseconds' worth in one
-- notice of its own (a NOTIFY inside the chunk's transaction would hold PostgreSQL's one notify lock through
-- each commit's flush, one commit at a time); a change of the run's state (its end makes the log complete)
-- is announced here, whatever code path or replica makes it.
CREATE FUNCTION assay_notify_run_log_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('assay_run_log', NEW.id::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER run_log_run_state AFTER UPDATE ON runs FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION assay_notify_run_log_state();
