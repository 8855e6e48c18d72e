-- Sweeps that search (random, sobol, tpe), stop trials early and retry failed ones.

-- A variation a searching sweep made after the commit: its sweep, its trial number and the point it set.
-- The only variations a committed experiment gains; one per trial, so a repeated create finds it.
ALTER TABLE variations ADD COLUMN sweep_id uuid REFERENCES sweeps (id);
ALTER TABLE variations ADD COLUMN sweep_trial integer;
ALTER TABLE variations ADD COLUMN sweep_params jsonb;
CREATE UNIQUE INDEX variations_by_sweep_trial ON variations (sweep_id, sweep_trial) WHERE sweep_id IS NOT NULL;

-- A run that retries a sweep run which failed crash, heartbeat_timeout or provision_failed (at most one each).
ALTER TABLE runs ADD COLUMN retries_run_id uuid UNIQUE REFERENCES runs (id);
-- A repeat sweep's run: the seed its config carries.
ALTER TABLE runs ADD COLUMN seed bigint;
-- Why a cancel was asked: 'cancelled' (a person, a sweep's cancel) or 'stopped_early' (the sweep's pruner).
ALTER TABLE runs ADD COLUMN cancel_reason text CHECK (cancel_reason IN ('cancelled', 'stopped_early'));

ALTER TABLE runs DROP CONSTRAINT runs_failure_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_failure_reason_check
  CHECK (failure_reason IN ('abandoned', 'crash', 'heartbeat_timeout', 'provision_failed', 'stopped_early'));

-- Successive halving's rung records: the objective value a sweep run had when it reached each rung, kept as
-- Optuna keeps its `completed_rung_<k>` trial attributes (the values later trials compete with).
CREATE TABLE sweep_rungs (
  sweep_id uuid NOT NULL REFERENCES sweeps (id),
  run_id uuid NOT NULL REFERENCES runs (id),
  rung integer NOT NULL,
  value double precision NOT NULL,
  PRIMARY KEY (run_id, rung)
);
CREATE INDEX sweep_rungs_by_sweep ON sweep_rungs (sweep_id, rung);
