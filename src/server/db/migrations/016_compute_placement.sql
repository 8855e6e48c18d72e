-- Preemption is its own failure: the cloud or the cluster took the instance back (a spot interruption, a
-- Slurm preemption or requeue), and recovery resumes the run from its newest checkpoint.
ALTER TABLE runs DROP CONSTRAINT runs_failure_reason_check;
ALTER TABLE runs ADD CONSTRAINT runs_failure_reason_check
  CHECK (failure_reason IN
    ('abandoned', 'crash', 'heartbeat_timeout', 'provision_failed', 'stopped_early', 'preempted'));

-- A managed run's place in the compute queue: higher first; equal priorities take turns by user.
ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100);
