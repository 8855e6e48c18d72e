-- One-word searches without visiting every match. Picking the RANK_CANDIDATES of a common word (tens of
-- thousands of matches) scored every match on rank_vector, which meant visiting every matching heap row. For a
-- query of one lexeme that score, ts_rank_cd(rank_vector, the lexeme), belongs to the (document, lexeme) pair
-- alone, so it is computed once here, at write time, and kept in a btree ordered the way search-repository.ts
-- picks candidates: the best of one word in one owner scope are the first entries of an index range. So is the
-- rank those candidates are then answered with, ts_rank_cd(search_vector, the lexeme), which otherwise reads
-- each candidate's out-of-line search_vector.
CREATE TABLE search_postings (
  -- The asset's organization_id, or its owner_user_id for a personal asset: the scope a search names. The
  -- search also checks the asset row's own tenancy columns, so this is only the way in, never the rule.
  scope uuid NOT NULL,
  lexeme text NOT NULL,
  -- ts_rank_cd(rank_vector, the lexeme alone): real, the type ts_rank_cd answers, so the order is the same.
  impact real NOT NULL,
  -- ts_rank_cd(search_vector, the lexeme alone): the rank a one-word search answers for the document.
  rank real NOT NULL,
  created_at timestamptz NOT NULL,
  -- No foreign key: its check would cost a lookup of the asset per posting on every write. The trigger below
  -- deletes an asset's postings with it, and search joins each posting to its asset row anyway.
  asset_id uuid NOT NULL
);

-- The postings of one document: every lexeme of rank_vector that search_vector holds too (the cut at 400
-- characters can leave a fragment of a word in rank_vector that no search matches), with both scores. The one
-- definition used by the trigger and the backfill; plpgsql so the out-of-line search_vector is read once.
CREATE FUNCTION assay_search_postings(opening tsvector, whole tsvector)
  RETURNS TABLE (lexeme text, impact real, rank real) LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  matched text[] := tsvector_to_array(whole);
BEGIN
  RETURN QUERY
    SELECT w.lexeme, ts_rank_cd(opening, w.q), ts_rank_cd(whole, w.q)
      FROM (
        -- The lexeme as a one-lexeme tsquery, quoted and escaped the way tsquery's input reads it.
        SELECT r.lexeme, ('''' || replace(replace(r.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery AS q
          FROM unnest(opening) r
         WHERE r.lexeme = ANY (matched)
      ) w;
END
$$;

CREATE FUNCTION assay_write_search_postings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM search_postings WHERE asset_id = OLD.id;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.rank_vector IS NOT NULL AND NEW.search_vector IS NOT NULL THEN
    INSERT INTO search_postings (scope, lexeme, impact, rank, created_at, asset_id)
    SELECT COALESCE(NEW.organization_id, NEW.owner_user_id), p.lexeme, p.impact, p.rank, NEW.created_at, NEW.id
      FROM assay_search_postings(NEW.rank_vector, NEW.search_vector) p;
  END IF;
  RETURN NULL;
END
$$;

-- Whatever writes assets (finalize, a bulk load, an operator's statement) keeps the postings in step. The
-- triggers come before the backfill: creating them locks out writers until this migration commits, so no
-- document is written between the backfill's snapshot and the first trigger that would have indexed it.
CREATE TRIGGER search_postings_insert AFTER INSERT ON assets FOR EACH ROW
  WHEN (NEW.rank_vector IS NOT NULL AND NEW.search_vector IS NOT NULL)
  EXECUTE FUNCTION assay_write_search_postings();
CREATE TRIGGER search_postings_update AFTER UPDATE ON assets FOR EACH ROW
  WHEN (OLD.rank_vector IS DISTINCT FROM NEW.rank_vector
        OR OLD.search_vector IS DISTINCT FROM NEW.search_vector
        OR OLD.organization_id IS DISTINCT FROM NEW.organization_id
        OR OLD.owner_user_id IS DISTINCT FROM NEW.owner_user_id
        OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION assay_write_search_postings();
-- Deleting an experiment or a run deletes its assets by cascade, which fires this too.
CREATE TRIGGER search_postings_delete AFTER DELETE ON assets FOR EACH ROW
  EXECUTE FUNCTION assay_write_search_postings();

INSERT INTO search_postings (scope, lexeme, impact, rank, created_at, asset_id)
SELECT COALESCE(a.organization_id, a.owner_user_id), p.lexeme, p.impact, p.rank, a.created_at, a.id
  FROM assets a, assay_search_postings(a.rank_vector, a.search_vector) p
 WHERE a.rank_vector IS NOT NULL AND a.search_vector IS NOT NULL;

-- Built after the backfill (one sort instead of row-by-row inserts). The order is the candidate order of
-- search-repository.ts: impact, then the newer document, then the id; rank rides along so that reading the
-- candidates is an index-only scan.
CREATE INDEX search_postings_top ON search_postings (scope, lexeme, impact DESC, created_at DESC, asset_id) INCLUDE (rank);
CREATE INDEX search_postings_asset ON search_postings (asset_id);
