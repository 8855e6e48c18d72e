-- Replicas cache verified keys for minutes (src/server/auth/authenticator.ts). Whatever makes a key stop working,
-- whichever code path or operator's statement does it, announces the key's id on the channel the replicas LISTEN
-- on; NOTIFY is transactional, so the announcement goes out on commit and never for a rolled-back change.
-- The channel's name is KEY_CHANGES_CHANNEL in src/server/auth/credential-repository.ts. Payload: a key id, or `*`
-- for "drop every cached entry" (a user's admin flag, which bounds the scopes of all their keys, changed).
CREATE FUNCTION assay_notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'users' THEN
    PERFORM pg_notify('assay_api_key_changes', '*');
  ELSE
    PERFORM pg_notify('assay_api_key_changes', OLD.id::text);
  END IF;
  RETURN NULL;
END
$$;

-- Recording a key's use (last_used_at) announces nothing: it happens on every cache miss.
CREATE TRIGGER api_key_changed AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
        OR OLD.scopes IS DISTINCT FROM NEW.scopes
        OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.kind IS DISTINCT FROM NEW.kind
        OR OLD.run_id IS DISTINCT FROM NEW.run_id
        OR OLD.secret_hash IS DISTINCT FROM NEW.secret_hash)
  EXECUTE FUNCTION assay_notify_api_key_change();

-- Deleting a user or a run deletes its keys by cascade, which fires this too.
CREATE TRIGGER api_key_deleted AFTER DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION assay_notify_api_key_change();

CREATE TRIGGER user_admin_changed AFTER UPDATE ON users FOR EACH ROW
  WHEN (OLD.is_admin IS DISTINCT FROM NEW.is_admin)
  EXECUTE FUNCTION assay_notify_api_key_change();
