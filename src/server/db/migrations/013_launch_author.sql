-- Who last wrote each variation's launch block. The `local` provider runs a command as the service's own OS
-- user, so it runs only admins' blocks (ASSAY_LOCAL_COMPUTE_USERS=admins), whoever provisions the run.
ALTER TABLE variations ADD COLUMN launch_author uuid REFERENCES users (id);

-- A sweep's variations were written by the sweep's creator.
UPDATE variations v SET launch_author = s.created_by
  FROM runs r JOIN sweeps s ON s.id = r.sweep_id
 WHERE r.experiment_id = v.experiment_id AND r.n = v.n;

-- Others by the experiment's owner when nobody else could have written them: a personal experiment; an
-- organization's whose other members are all admins; or an owner who is no admin (the cautious answer).
-- Left NULL (unknown, so refused where authorship matters): an admin's experiment with non-admin members.
UPDATE variations v SET launch_author = e.owner_user_id
  FROM experiments e JOIN users owner ON owner.id = e.owner_user_id
 WHERE e.id = v.experiment_id AND v.launch_author IS NULL
   AND (e.organization_id IS NULL OR NOT owner.is_admin OR NOT EXISTS (
         SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = e.organization_id AND m.user_id <> e.owner_user_id AND NOT u.is_admin));
