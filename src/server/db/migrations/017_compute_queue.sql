-- The `local` compute queue: managed runs waiting for, or holding, a run slot and their GPUs on the shared
-- machine. A row is added when the run's saga first asks for capacity and removed when the run is concluded
-- (src/server/runs/compute-queue.ts). granted_at is null while the run waits; gpu_ids are the GPUs it holds.
CREATE TABLE compute_queue (
  run_id uuid PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  user_id uuid,
  priority integer NOT NULL DEFAULT 0,
  gpus integer NOT NULL DEFAULT 0 CHECK (gpus >= 0),
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  granted_at timestamptz,
  gpu_ids integer[] NOT NULL DEFAULT '{}',
  CHECK (granted_at IS NOT NULL OR cardinality(gpu_ids) = 0)
);
CREATE INDEX compute_queue_waiting ON compute_queue (priority DESC, enqueued_at) WHERE granted_at IS NULL;

-- Whose turn it is among equal priorities: each user's newest grant, kept after their runs leave the queue.
CREATE TABLE compute_queue_turns (
  user_id uuid PRIMARY KEY,
  last_granted_at timestamptz NOT NULL
);
