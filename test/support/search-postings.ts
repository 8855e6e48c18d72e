/**
 * The schema before migration 010_search_postings.sql, for the tests and bench/search.ts that run 010 as an
 * upgrade of a table that already holds documents (one multi-statement text, for the simple query protocol).
 */
export const UNDO_MIGRATION_010 = `DROP TRIGGER search_postings_insert ON assets;
DROP TRIGGER search_postings_update ON assets;
DROP TRIGGER search_postings_delete ON assets;
DROP FUNCTION assay_write_search_postings();
DROP FUNCTION assay_search_postings(tsvector, tsvector);
DROP TABLE search_postings;
DELETE FROM schema_migrations WHERE version = '010_search_postings.sql';`;
