-- Managed runs: who provisioned a run, recovery runs, sweeps, and the built-in orchestrator user.

-- The user who asked for the managed run: its worker keys are minted for them, so they reach only what they may see.
ALTER TABLE runs ADD COLUMN provisioned_by uuid REFERENCES users (id);

-- A recovery run points at the run whose instance was lost; UNIQUE keeps it to one recovery per run.
ALTER TABLE runs ADD COLUMN recovers_run_id uuid UNIQUE REFERENCES runs (id);

CREATE TABLE sweeps (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  experiment_id uuid NOT NULL REFERENCES experiments (id),
  workflow_id text NOT NULL UNIQUE,
  spec jsonb NOT NULL,
  concurrency integer NOT NULL,
  created_by uuid REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sweeps_by_experiment ON sweeps (experiment_id, created_at DESC);

ALTER TABLE runs ADD COLUMN sweep_id uuid REFERENCES sweeps (id);
CREATE INDEX runs_by_sweep ON runs (sweep_id) WHERE sweep_id IS NOT NULL;

-- The orchestrator's own user (ORCHESTRATOR_USER_ID in src/server/orchestration/orchestrator-user.ts): it owns the
-- orchestrator keys, holds only the `orchestrate` scope, belongs to no organization and owns no experiment.
INSERT INTO users (id, email, name, is_admin)
VALUES ('00000000-0000-4000-8000-00000000a55a', 'orchestrator@assay.internal', 'Assay orchestrator', false);
