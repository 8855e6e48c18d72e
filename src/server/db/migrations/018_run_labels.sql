-- What a researcher tells runs apart by: an optional name, tags and notes (markdown), editable after the run
-- was created; a run can be archived (hidden from lists and compare, kept). Experiments get tags too.
ALTER TABLE runs ADD COLUMN name text CHECK (char_length(name) BETWEEN 1 AND 200);
ALTER TABLE runs ADD COLUMN tags text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 32);
ALTER TABLE runs ADD COLUMN notes text NOT NULL DEFAULT '' CHECK (char_length(notes) <= 20000);
ALTER TABLE runs ADD COLUMN archived_at timestamptz;
-- The run whose checkpoints this one resumes from, chosen when it was created (`assay run --resume-from`):
-- a new run of a variation starts from scratch unless it is asked to, or is the recovery of a lost instance.
ALTER TABLE runs ADD COLUMN resumes_from_run_id uuid REFERENCES runs(id) ON DELETE SET NULL;
CREATE INDEX runs_tags ON runs USING gin (tags);

ALTER TABLE experiments ADD COLUMN tags text[] NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 32);
CREATE INDEX experiments_tags ON experiments USING gin (tags);
