-- Ranking without reading every match's search_vector. That vector (name, metadata and the whole text) is
-- ~2.5 kB on a typical document, so PostgreSQL keeps it out of line (TOAST) and ranking a common word's 20,000
-- matches read 20,000 of them. rank_vector holds the same name (A) and metadata (B) and only the opening of the
-- text (C): small enough to stay in the heap row, it picks the candidates that search-repository.ts then ranks
-- on the full vector. The expression is the one asset-repository.ts markReady computes; keep the two equal.
ALTER TABLE assets ADD COLUMN rank_vector tsvector;

-- Existing documents get theirs here, in the migration's transaction: one rewrite of every indexed row (see
-- docs/production.md for the cost on a large table).
UPDATE assets
   SET rank_vector = setweight(to_tsvector('english', name), 'A') ||
                     setweight(jsonb_to_tsvector('english', metadata, '["string"]'), 'B') ||
                     setweight(to_tsvector('english', left(COALESCE(search_text, ''), 400)), 'C')
 WHERE search_vector IS NOT NULL;
