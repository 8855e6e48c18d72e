import { Type } from 'typebox';

export const MAX_TAGS = 32;
export const MAX_TAG_LENGTH = 64;
/** A run or experiment tag: a short label to filter by; no commas (a list filter separates by them). */
export const Tag = Type.String({
  minLength: 1,
  maxLength: MAX_TAG_LENGTH,
  pattern: '^[^,\\s](?:[^,]*[^,\\s])?$',
});
/** At most 32 distinct tags. */
export const Tags = Type.Array(Tag, { maxItems: MAX_TAGS, uniqueItems: true });
