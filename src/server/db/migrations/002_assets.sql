-- Assets (records only; the bytes live in object storage) and their full-text search index.

CREATE TABLE assets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Tenancy columns with the same meaning as on experiments, so one visibility predicate serves both.
  organization_id uuid REFERENCES organizations (id),
  owner_user_id uuid NOT NULL REFERENCES users (id),
  experiment_id uuid REFERENCES experiments (id) ON DELETE CASCADE,
  run_id uuid REFERENCES runs (id) ON DELETE CASCADE,
  kind text NOT NULL,
  name text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ready')),
  metadata jsonb NOT NULL DEFAULT '{}',
  inline boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  finalized_at timestamptz,
  search_text text,
  search_vector tsvector
);
CREATE INDEX assets_by_experiment ON assets (experiment_id, created_at DESC, id DESC);
CREATE INDEX assets_by_run ON assets (run_id, created_at DESC, id DESC);
CREATE INDEX assets_by_owner ON assets (owner_user_id, created_at DESC, id DESC);
CREATE INDEX assets_by_org ON assets (organization_id, created_at DESC, id DESC);
CREATE INDEX assets_search ON assets USING GIN (search_vector);

CREATE TABLE asset_components (
  asset_id uuid NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
  name text NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  content_type text NOT NULL,
  sha256 text,
  storage_key text NOT NULL,
  upload_id text,
  part_size bigint,
  PRIMARY KEY (asset_id, name)
);
