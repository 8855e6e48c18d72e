-- Core schema: users, organizations, experiments, variations, runs, API keys.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text UNIQUE,
  name text,
  idp_issuer text,
  idp_subject text,
  is_admin boolean NOT NULL DEFAULT false,
  default_organization_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (idp_issuer, idp_subject)
);

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE users ADD CONSTRAINT users_default_org_fk
  FOREIGN KEY (default_organization_id) REFERENCES organizations (id) ON DELETE SET NULL;

CREATE TABLE memberships (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_by_user ON memberships (user_id);

CREATE TABLE experiments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  organization_id uuid REFERENCES organizations (id),
  owner_user_id uuid NOT NULL REFERENCES users (id),
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  hypothesis text NOT NULL DEFAULT '',
  state text NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'committed', 'concluded', 'retracted')),
  next_variation_n integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  committed_at timestamptz,
  concluded_at timestamptz,
  retracted_at timestamptz,
  retraction_reason text
);
CREATE INDEX experiments_by_org ON experiments (organization_id, created_at DESC, id DESC);
CREATE INDEX experiments_personal ON experiments (owner_user_id, created_at DESC, id DESC) WHERE organization_id IS NULL;

CREATE TABLE experiment_parents (
  child_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  parent_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX experiment_parents_by_parent ON experiment_parents (parent_id);

CREATE TABLE variations (
  experiment_id uuid NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
  n integer NOT NULL,
  name text NOT NULL,
  config_yaml text NOT NULL,
  config_json jsonb NOT NULL,
  accelerate_config_json jsonb NOT NULL,
  launch_config jsonb NOT NULL,
  next_run_r integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (experiment_id, n)
);

CREATE TABLE runs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  experiment_id uuid NOT NULL,
  n integer NOT NULL,
  r integer NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'succeeded', 'failed')),
  failure_reason text CHECK (failure_reason IN ('abandoned', 'crash', 'heartbeat_timeout', 'provision_failed')),
  failure_message text,
  environment jsonb,
  config_read_at timestamptz,
  started_at timestamptz,
  last_heartbeat_at timestamptz,
  ended_at timestamptz,
  managed boolean NOT NULL DEFAULT false,
  instance jsonb,
  workflow_id text,
  cancel_requested boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (experiment_id, n, r),
  FOREIGN KEY (experiment_id, n) REFERENCES variations (experiment_id, n) ON DELETE CASCADE
);
-- The watchdog's scan: only running runs, ordered by their last sign of life.
CREATE INDEX runs_watchdog ON runs (last_heartbeat_at) WHERE state = 'running';

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('user', 'agent', 'worker')),
  description text NOT NULL DEFAULT '',
  scopes text[] NOT NULL,
  secret_hash bytea NOT NULL,
  run_id uuid REFERENCES runs (id) ON DELETE CASCADE,
  minted_by_key_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  CHECK ((kind = 'worker') = (run_id IS NOT NULL))
);
CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at DESC);

-- Facts the service records about itself, such as when the bootstrap admin was made.
CREATE TABLE service_facts (
  name text PRIMARY KEY,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
