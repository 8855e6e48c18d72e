-- The runner's control long-poll (GET …/runs/{r}/control) waits on the replica it reached; whatever asks a
-- running run to stop or moves it on (a person's cancel, a sweep's early stop through its own SQL, the
-- watchdog, the runner's final move, an operator's statement) announces the run's id on the channel every
-- replica LISTENs on, so the waiting poll answers at once. NOTIFY goes out on commit, never for a rollback.
-- The channel's name is RUN_CONTROL_CHANNEL in src/server/runs/run-repository.ts.
CREATE FUNCTION assay_notify_run_control() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('assay_run_control', NEW.id::text);
  RETURN NULL;
END
$$;

-- A heartbeat sets state to what it was: no announcement.
CREATE TRIGGER run_control_changed AFTER UPDATE ON runs FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.cancel_requested IS DISTINCT FROM NEW.cancel_requested)
  EXECUTE FUNCTION assay_notify_run_control();
