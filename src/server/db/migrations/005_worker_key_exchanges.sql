-- One-time exchange tokens: a managed instance gets one of these instead of a worker key (EC2 user data is
-- readable by anyone allowed to describe the instance) and trades it for the run's worker key when its runner
-- starts. Only the secret's hash is stored; a token is spent by its first exchange, or voided when another token
-- of the run was exchanged or the run's keys were revoked.
CREATE TABLE worker_key_exchanges (
  id uuid PRIMARY KEY,
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  secret_hash bytea NOT NULL,
  -- The orchestrator key that asked for it: the worker key bought with it is minted under that key's lineage.
  minted_by_key_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  spent_at timestamptz,
  -- The worker key it bought; NULL while unused and when it was voided instead.
  worker_key_id uuid REFERENCES api_keys (id) ON DELETE SET NULL
);
CREATE INDEX worker_key_exchanges_by_run ON worker_key_exchanges (run_id);
