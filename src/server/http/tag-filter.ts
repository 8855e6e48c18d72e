import { MAX_TAG_LENGTH, MAX_TAGS } from '@assay/contract';
import { badRequest } from './errors.ts';

// The Tag schema's pattern (src/contract/tags.ts): no comma, no space at either end.
const TAG = /^[^,\s](?:[^,]*[^,\s])?$/;

/**
 * The tags of a list's `tag` filter (`?tag=a,b`: an item has every one), each checked as a tag is, so a
 * filter that no tag could satisfy is a 400 naming it rather than an empty answer. Undefined: no filter.
 */
export function parseTagFilter(raw: string | undefined): string[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  const tags = [...new Set(raw.split(',').map((t) => t.trim()))];
  const bad = tags.find((t) => t.length > MAX_TAG_LENGTH || !TAG.test(t));
  if (bad !== undefined)
    throw badRequest('invalid_parameter', `tag: ${JSON.stringify(bad)} is not a tag (1 to ${MAX_TAG_LENGTH} characters, no comma)`, {
      tag: bad,
    });
  if (tags.length > MAX_TAGS)
    throw badRequest('invalid_parameter', `tag names at most ${MAX_TAGS} tags`, { count: tags.length });
  return tags;
}
