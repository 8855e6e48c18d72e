-- The sha256 of each part of a multipart component, as the client declared them: the store verifies every part
-- against its checksum on upload and at completion, so finalize need not read the bytes again.
ALTER TABLE asset_components ADD COLUMN part_sha256 text[];
