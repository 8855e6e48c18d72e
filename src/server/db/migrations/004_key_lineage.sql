-- Key lineage: revoking a key revokes every key it minted, transitively; this index finds a key's children.
CREATE INDEX api_keys_by_minter ON api_keys (minted_by_key_id) WHERE minted_by_key_id IS NOT NULL;
