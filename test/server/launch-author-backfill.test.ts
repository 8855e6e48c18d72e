// Migration 013 credits each existing launch block to whoever could have written it, and to nobody when an
// admin's organization experiment has non-admin members (then `local` refuses the block until an admin
// saves it).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrationUpgrade } from '../support/migration-upgrade.ts';
import type { TestService } from '../support/service.ts';

const CONFIG = { config_yaml: 'lr: 0.1\nlaunch:\n  command: python train.py\n' };

async function experimentWithVariation(t: TestService, key: string, organizationId: string | null) {
  const e = await t
    .as(key)
    .post('/experiments', { name: 'e', organization_id: organizationId ?? 'personal' });
  assert.equal(e.status, 201, JSON.stringify(e.body));
  const v = await t.as(key).post(`/experiments/${e.body.id}/variations`, CONFIG);
  assert.equal(v.status, 201, JSON.stringify(v.body));
  return e.body.id as string;
}

async function organization(t: TestService, ownerKey: string, memberIds: string[]) {
  const slug = `o-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const org = await t.as(ownerKey).post('/organizations', { slug, name: slug });
  for (const user_id of memberIds)
    assert.equal(
      (await t.as(ownerKey).post(`/organizations/${org.body.id}/members`, { user_id })).status,
      201,
    );
  return org.body.id as string;
}

describe('migration 013 on a database with variations', () => {
  // Authorship decides on `local` only where admins alone may run it (the default without the sandbox).
  const db = migrationUpgrade({ ASSAY_LOCAL_COMPUTE_USERS: 'admins' });

  it('backfills launch_author from the sweep creator or an owner nobody else could stand in for', async () => {
    const t = db.primary;
    const admin = (await t.as(t.adminKey).get('/v1/me')).body.id as string;
    const otherAdmin = await t.createUser();
    await db.rows(`UPDATE users SET is_admin = true WHERE id = '${otherAdmin.id}'`);
    const researcher = await t.createUser();

    const personal = await experimentWithVariation(t, researcher.key, null);
    const mixed = await experimentWithVariation(
      t,
      t.adminKey,
      await organization(t, t.adminKey, [researcher.id]),
    );
    const admins = await experimentWithVariation(
      t,
      t.adminKey,
      await organization(t, t.adminKey, [otherAdmin.id]),
    );
    const researchers = await experimentWithVariation(
      t,
      researcher.key,
      await organization(t, researcher.key, [admin]),
    );
    // An admin's experiment whose variation a non-admin's sweep made.
    const swept = await experimentWithVariation(t, t.adminKey, null);
    assert.equal((await t.as(t.adminKey).post(`/experiments/${swept}/commit`)).status, 200);
    const run = await t.as(t.adminKey).post(`/experiments/${swept}/variations/1/runs`);
    await db.rows(
      `WITH s AS (INSERT INTO sweeps (experiment_id, workflow_id, spec, concurrency, created_by)
                  VALUES ('${swept}', 'sweep-backfill', '{}', 1, '${researcher.id}') RETURNING id)
       UPDATE runs SET sweep_id = (SELECT id FROM s) WHERE id = '${run.body.id}'`,
    );

    const upgraded = await db.reapply(
      `ALTER TABLE variations DROP COLUMN launch_author;
       DELETE FROM schema_migrations WHERE version = '013_launch_author.sql';`,
    );
    const authors = Object.fromEntries(
      (await db.rows('SELECT experiment_id, launch_author FROM variations')).map((r) => [
        r.experiment_id,
        r.launch_author,
      ]),
    );
    assert.deepEqual(
      [personal, mixed, admins, researchers, swept].map((id) => authors[id]),
      [researcher.id, null, admin, researcher.id, researcher.id],
    );

    // The unknown author is refused on `local` when the admin provisions, with words the admin can act on.
    assert.equal((await upgraded.as(t.adminKey).post(`/experiments/${mixed}/commit`)).status, 200);
    const pending = await upgraded.as(t.adminKey).post(`/experiments/${mixed}/variations/1/runs`);
    const res = await upgraded
      .as(t.adminKey)
      .post(`/experiments/${mixed}/variations/1/runs/${pending.body.r}/provision`);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.match(res.body.error.message, /unknown user/);
  });
});
