-- Phrase searches without reading every document that holds the words. The GIN index on search_vector keeps
-- no positions, so for "a b" it finds every document holding both words and each is checked against its
-- out-of-line search_vector (thousands of 2.5 kB reads for two common words, a few dozen matching). This index
-- holds, per document, a hash of each pair of lexemes at adjacent positions in search_vector (the positions a
-- phrase's <-> tests), so a phrase of adjacent words is first narrowed to the documents holding each of its
-- pairs; the vector check stays, so a hash collision costs a read and never a wrong match.
CREATE FUNCTION assay_search_pairs(v tsvector) RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT COALESCE(array_agg(DISTINCT hashtext(x.lexeme || ' ' || y.lexeme)), '{}')
    FROM (SELECT u.lexeme, p FROM unnest(v) u, unnest(u.positions) p) x
    JOIN (SELECT u.lexeme, p FROM unnest(v) u, unnest(u.positions) p) y ON y.p = x.p + 1
$$;

-- Computed from search_vector as each row is written: no column, no trigger, nothing for a writer to keep in
-- step. Building it reads every document's vector once (minutes at 100,000 documents; docs/production.md).
CREATE INDEX assets_search_pairs ON assets USING GIN (assay_search_pairs(search_vector));
