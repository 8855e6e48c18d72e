-- A deployment's identity: one installation id, made at its first start and kept for its life. The Temporal
-- task queue carries it (`assay-<id>`), so two deployments on one Temporal never take each other's workflows.
CREATE TABLE deployment (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  installation_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
