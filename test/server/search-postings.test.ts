import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RANK_CANDIDATES } from '../../src/server/search/search-repository.ts';
import { migrationUpgrade } from '../support/migration-upgrade.ts';
import { UNDO_MIGRATION_010 } from '../support/search-postings.ts';
import { startTestService, type TestService } from '../support/service.ts';

// One-word searches, and words all ANDed or all ORed, read their candidates from search_postings (migration
// 010_search_postings.sql); these check that the postings follow the documents and that reading them changes
// neither what a search answers nor whose documents it can reach.

const FILLER = (
  'the model was trained for several epochs on the held out split and we logged the loss every hundred ' +
  'steps while the accuracy on validation kept rising slowly before it levelled off near the end of training'
).split(' ');
const filler = (n: number, offset: number) =>
  Array.from({ length: n }, (_, i) => FILLER[(offset + i * 7) % FILLER.length]).join(' ');

/**
 * The ranking searchAssets promises, written out over every match: the best RANK_CANDIDATES by rank_vector,
 * ranked on search_vector, newest first on ties. A page from the postings must equal it.
 */
const REFERENCE = `WITH query AS (SELECT websearch_to_tsquery('english', $1) AS q),
  candidates AS (
    SELECT a.id, a.created_at FROM assets a, query
     WHERE a.search_vector @@ query.q AND a.state = 'ready' AND a.organization_id IS NOT DISTINCT FROM $2::uuid
       AND a.owner_user_id = COALESCE($3::uuid, a.owner_user_id) AND a.kind = COALESCE($4, a.kind)
     ORDER BY ts_rank_cd(a.rank_vector, query.q) DESC, a.created_at DESC, a.id LIMIT ${RANK_CANDIDATES})
  SELECT c.id FROM candidates c JOIN assets a USING (id), query
   ORDER BY ts_rank_cd(a.search_vector, query.q) DESC, c.created_at DESC, c.id LIMIT 20`;

/** Postings that differ from what 010's function computes from the documents as they are now. */
const STALE = `WITH expected AS (
    SELECT COALESCE(a.organization_id, a.owner_user_id) AS scope, p.lexeme, p.impact, p.rank, a.created_at, a.id AS asset_id
      FROM assets a, assay_search_postings(a.rank_vector, a.search_vector) p
     WHERE a.rank_vector IS NOT NULL AND a.search_vector IS NOT NULL)
  SELECT count(*)::int AS n FROM (
    (SELECT * FROM expected EXCEPT ALL SELECT scope, lexeme, impact, rank, created_at, asset_id FROM search_postings)
    UNION ALL
    (SELECT scope, lexeme, impact, rank, created_at, asset_id FROM search_postings EXCEPT ALL SELECT * FROM expected)) d`;

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`search postings on ${driver}`, () => {
    let t: TestService;
    let owner: { id: string; email: string; key: string };
    let orgId: string;
    const sql = <T = any>(text: string, params: unknown[] = []) => t.service.db.query<T>(text, params);
    const doc = async (name: string, content: string, extra: object = {}) => {
      const res = await t
        .as(owner.key)
        .post('/assets', { kind: 'report', name, content, metadata: {}, ...extra });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as string;
    };
    const ids = async (q: string, extra = '', key = owner.key) => {
      const res = await t.as(key).get(`/search?q=${encodeURIComponent(q)}${extra}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.items.map((i: { asset_id: string }) => i.asset_id) as string[];
    };
    const reference = async (q: string, scope: { org?: string; kind?: string } = {}) =>
      (
        await sql<{ id: string }>(REFERENCE, [
          q,
          scope.org ?? null,
          scope.org ? null : owner.id,
          scope.kind ?? null,
        ])
      ).map((r) => r.id);

    before(async () => {
      t = await startTestService({ pglite: driver === 'pglite' });
      owner = await t.createUser();
      const org = await t
        .as(owner.key)
        .post('/organizations', { slug: `postings-${driver}-${Date.now()}`, name: 'P' });
      assert.equal(org.status, 201, JSON.stringify(org.body));
      orgId = org.body.id;
      // "zebrafish" in more openings than are ranked in full, at different places and counts, so the postings
      // alone fill the candidates; a few hold it only past the opening (no posting, score 0 on rank_vector).
      for (let i = 0; i < RANK_CANDIDATES + 30; i++) {
        const mentions = Array.from({ length: 1 + (i % 3) }, () => 'zebrafish').join(' and ');
        // "medaka" beside it in most openings, near or apart, so "zebrafish medaka" and "zebrafish or
        // medaka" fill their candidates from the postings too; in the rest only past the opening.
        const medaka = i % 7 === 0 ? '' : i % 2 === 0 ? ' medaka' : ` ${filler(i % 9, i)} medaka medaka`;
        await doc(
          i % 17 === 0 ? `Zebrafish study ${i}` : `Note ${i}`,
          `${filler(i % 40, i)} ${mentions}${medaka}. ${filler(120, i + 1)}${i % 7 === 0 ? ' medaka.' : ''}`,
          { kind: i % 5 === 0 ? 'document' : 'report' },
        );
      }
      for (let i = 0; i < 12; i++)
        await doc(`Deep note ${i}`, `${filler(150, i)}. Zebrafish and axolotl. ${filler(10, i)}`);
      // "quagga or newt": more documents than candidates with "quagga" twice in the opening, then newer ones
      // with "quagga newt" there and both words many times past it. Only the sum of the words' impacts ties
      // the newer with the older (ties go to the newer), which keeps them among the candidates.
      for (let i = 0; i < RANK_CANDIDATES + 10; i++) await doc(`Q ${i}`, `Quagga quagga. ${filler(20, i)}`);
      for (let i = 0; i < 20; i++)
        await doc(`N ${i}`, `Quagga newt. ${filler(120, i)} ${'quagga newt '.repeat(10)}`);
      // "axolotl": a rare word, fewer postings than candidates, most matches only past the opening.
      for (let i = 0; i < 3; i++) await doc(`Axolotl ${i}`, `Axolotl tanks. ${filler(30, i)}`);
    });
    after(() => t.close());

    it('answers the page that ranking every match would, for common and rare words and with a kind', async () => {
      const common = await ids('zebrafish');
      assert.equal(common.length, 20);
      assert.deepEqual(common, await reference('zebrafish'));
      assert.deepEqual(await ids('axolotl'), await reference('axolotl'));
      assert.equal((await ids('axolotl')).length, 15);
      assert.deepEqual(
        await ids('zebrafish', '&kind=document'),
        await reference('zebrafish', { kind: 'document' }),
      );
      assert.deepEqual(
        await ids('Zebrafish!'),
        await reference('zebrafish'),
        'the same lexeme however typed',
      );
      assert.deepEqual(await sql(STALE), [{ n: 0 }]);
      // The rank a posting carries is the rank on the whole search_vector, as a scanned candidate's is.
      const page = (await t.as(owner.key).get('/search?q=zebrafish')).body.items as Array<{
        asset_id: string;
        rank: number;
      }>;
      const full = await sql<{ id: string; rank: number }>(
        `SELECT id, ts_rank_cd(search_vector, websearch_to_tsquery('english', 'zebrafish'))::float8 AS rank
           FROM assets WHERE id = ANY($1::uuid[])`,
        [page.map((i) => i.asset_id)],
      );
      const rankOf = new Map(full.map((r) => [r.id, r.rank]));
      assert.deepEqual(
        page.map((i) => i.rank),
        page.map((i) => rankOf.get(i.asset_id)),
      );
      const [{ count }] = await sql<{ count: number }>(
        "SELECT count(DISTINCT asset_id)::int AS count FROM search_postings WHERE lexeme = 'zebrafish'",
      );
      assert.equal(
        count,
        RANK_CANDIDATES + 30,
        'a posting for each document holding the word in its opening',
      );
    });

    it('answers that page for words ANDed, ORed or in a phrase, from the postings, the pairs or the scan', async () => {
      for (const q of [
        'zebrafish medaka',
        'medaka zebrafish zebrafish',
        'zebrafish or medaka',
        'zebrafish axolotl',
        'axolotl or quagga',
        'quagga or newt',
        'zebrafish or axolotl or medaka',
        'zebrafish -axolotl',
        '"zebrafish medaka"',
        '"zebrafish medaka medaka"',
        '"medaka medaka"',
        '"zebrafish and zebrafish"',
        '"zebrafish medaka" medaka',
      ]) {
        const page = await ids(q);
        assert.ok(page.length > 0, q);
        assert.deepEqual(page, await reference(q), q);
        assert.deepEqual(
          await ids(q, '&kind=document'),
          await reference(q, { kind: 'document' }),
          `${q}, kind=document`,
        );
      }
      assert.equal((await ids('zebrafish medaka')).length, 20);
      assert.equal((await ids('zebrafish or medaka')).length, 20);
      const either = await t.as(owner.key).get('/search?q=quagga%20or%20newt');
      assert.deepEqual(
        either.body.items.map((i: { name: string }) => i.name.split(' ')[0]),
        Array(20).fill('N'),
        'the documents holding both words, ranked on their whole text',
      );
      assert.equal((await ids('zebrafish axolotl')).length, 12, 'only past the opening: every match scanned');
    });

    it("follows a document's edits and its deletion", async () => {
      const id = await doc('Quokka census', `Quokka counts by island. ${filler(50, 3)}`);
      assert.deepEqual(await ids('quokka'), [id]);
      // No route edits a document's text yet; an operator's statement (or a later one) must keep postings
      // in step.
      await sql(
        `UPDATE assets SET name = 'Wombat census', search_text = $2,
                search_vector = setweight(to_tsvector('english', 'Wombat census'), 'A') || setweight(to_tsvector('english', $2), 'C'),
                rank_vector = setweight(to_tsvector('english', 'Wombat census'), 'A') || setweight(to_tsvector('english', left($2, 400)), 'C')
          WHERE id = $1`,
        [id, `Wombat counts by island. ${filler(50, 3)}`],
      );
      assert.deepEqual(await ids('quokka'), []);
      assert.deepEqual(await ids('wombat'), [id]);
      assert.deepEqual(await ids('"wombat counts"'), [id], 'the phrase pairs follow the edit too');
      assert.deepEqual(await ids('"quokka counts"'), []);
      assert.deepEqual(await sql(STALE), [{ n: 0 }]);
      await sql('DELETE FROM assets WHERE id = $1', [id]);
      assert.deepEqual(await ids('wombat'), []);
      assert.deepEqual(
        await sql('SELECT count(*)::int AS n FROM search_postings WHERE asset_id = $1', [id]),
        [{ n: 0 }],
      );
      assert.deepEqual(await sql(STALE), [{ n: 0 }]);
    });

    it("never answers another scope's documents, even through a posting filed under this scope", async () => {
      const member = await t.createUser();
      const outsider = await t.createUser();
      const added = await t.as(owner.key).post(`/organizations/${orgId}/members`, { email: member.email });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      const inOrg: string[] = [];
      for (let i = 0; i < 3; i++)
        inOrg.push(
          await doc(`Zebrafish org ${i}`, 'Zebrafish zebrafish zebrafish.', { organization_id: orgId }),
        );
      const outsiders = await t.as(outsider.key).post('/assets', {
        kind: 'report',
        name: 'Zebrafish zebrafish',
        content: 'Zebrafish zebrafish zebrafish zebrafish.',
        metadata: {},
      });
      assert.equal(outsiders.status, 201);
      // Postings of the owner's personal documents and the outsider's, misfiled under the organization.
      await sql(
        `INSERT INTO search_postings (scope, lexeme, impact, rank, created_at, asset_id)
         SELECT $1, lexeme, 1000, rank, created_at, asset_id FROM search_postings WHERE scope = ANY($2::uuid[]) AND lexeme = 'zebrafish'`,
        [orgId, [owner.id, outsider.id]],
      );
      for (const who of [owner, member])
        for (const q of ['zebrafish', 'zebrafish zebrafish', 'zebrafish or quagga']) {
          const found = await ids(q, `&organization_id=${orgId}`, who.key);
          assert.deepEqual(
            [...found].sort(),
            [...inOrg].sort(),
            `${q}: ${who === owner ? 'owner' : 'member'} in the organization`,
          );
          assert.deepEqual(found, await reference(q, { org: orgId }));
        }
      const personal = await ids('zebrafish');
      assert.equal(personal.length, 20);
      assert.ok(!personal.some((id) => inOrg.includes(id) || id === outsiders.body.id));
      assert.deepEqual(await ids('zebrafish', '', outsider.key), [outsiders.body.id]);
      assert.deepEqual(await ids('zebrafish or quagga', '', outsider.key), [outsiders.body.id]);
      const refused = await t.as(outsider.key).get(`/search?q=zebrafish&organization_id=${orgId}`);
      assert.ok(refused.status === 403 || refused.status === 404, JSON.stringify(refused.body));
      await sql('DELETE FROM search_postings WHERE scope = $1 AND impact = 1000', [orgId]);
    });
  });
}

describe('migration 010 on a database with documents', () => {
  const db = migrationUpgrade();

  it('backfills the postings the triggers would have written, in every scope', async () => {
    const t = db.primary;
    const owner = await t.createUser();
    const other = await t.createUser();
    const org = await t.as(owner.key).post('/organizations', { slug: `upgrade-${Date.now()}`, name: 'U' });
    const post = (key: string, name: string, content: string, extra: object = {}) =>
      t.as(key).post('/assets', { kind: 'report', name, content, metadata: { tags: ['notes'] }, ...extra });
    await post(owner.key, 'Dropout sweep', `${filler(100, 1)}. Dropout of 0.1 was best.`);
    await post(owner.key, 'Dropout in the organization', `Dropout. ${filler(30, 2)}`, {
      organization_id: org.body.id,
    });
    await post(other.key, 'Long training diary', `${filler(70, 2)} dropout ${filler(400, 3)}`);
    await post(owner.key, 'dropout curves', 'dropout dropout', { kind: 'output' });
    const rows = db.rows;
    const postings = () =>
      rows(
        'SELECT scope, lexeme, impact, rank, created_at, asset_id FROM search_postings ORDER BY asset_id, lexeme',
      );
    const written = await postings();
    assert.ok(written.length > 0);
    const upgraded = await db.reapply(UNDO_MIGRATION_010);
    assert.deepEqual(await postings(), written);
    assert.deepEqual(await rows(STALE), [{ n: 0 }]);
    const found = await upgraded.as(owner.key).get('/search?q=dropout');
    assert.deepEqual(
      found.body.items.map((i: { name: string }) => i.name),
      ['Dropout sweep'],
    );
    // The triggers are back too: a new document gets its postings.
    await post(owner.key, 'Dropout again', 'Dropout once more.');
    assert.deepEqual(await rows(STALE), [{ n: 0 }]);
    assert.equal((await postings()).length > written.length, true);
  });
});

describe('migration 020 on a database with documents', () => {
  const db = migrationUpgrade();

  it('indexes the phrase pairs of the documents already there', async () => {
    const owner = await db.primary.createUser();
    const post = (name: string, content: string) =>
      db.primary.as(owner.key).post('/assets', { kind: 'report', name, content, metadata: {} });
    await post('Smoothing notes', `${filler(60, 1)}. Label smoothing helped. ${filler(20, 2)}`);
    await post('Apart', `Label noise. ${filler(40, 3)}. Smoothing of curves.`);
    const upgraded = await db.reapply(`DROP INDEX assets_search_pairs;
      DROP FUNCTION assay_search_pairs(tsvector);
      DELETE FROM schema_migrations WHERE version = '020_search_phrase_pairs.sql';`);
    const names = async (q: string) =>
      (await upgraded.as(owner.key).get(`/search?q=${encodeURIComponent(q)}`)).body.items.map(
        (i: { name: string }) => i.name,
      );
    assert.deepEqual(await names('"label smoothing"'), ['Smoothing notes']);
    assert.deepEqual((await names('label smoothing')).sort(), ['Apart', 'Smoothing notes']);
    assert.deepEqual(
      await db.rows("SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'assets_search_pairs'"),
      [{ n: 1 }],
    );
  });
});
