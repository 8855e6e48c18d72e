// Deterministic synthetic research documents for the search benchmark: a Zipf-distributed vocabulary whose
// most frequent ranks are real English stop words (dropped by to_tsvector, as in real text) followed by
// made-up content words, so query terms range from "in a third of all documents" to "in a few dozen".

/** mulberry32: a small, fast, seedable PRNG; the same seed gives the same stream on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// In rough order of English frequency; every one is in PostgreSQL's english.stop.
const STOP_WORDS = (
  'the of and to a in is that for it as was with be by on not this are or from at which but have an had they were their ' +
  'all we can has there been if when will who so no its than then these them into some only other such our most both ' +
  'each more over very about between through after before under again any same own what how where why here'
).split(' ');

const ONSETS = [
  'b',
  'c',
  'd',
  'f',
  'g',
  'h',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'z',
  'br',
  'cl',
  'dr',
  'gr',
  'pl',
  'st',
  'tr',
  'sk',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', '', 'n', 'r', 'l', 'm', 'x', 'nd', 'st'];

export interface Vocabulary {
  /** Every word by rank: STOP_WORDS first, then content words. */
  words: string[];
  stopWords: number;
  /** Cumulative Zipf weights over all ranks (text) and over content ranks only (query terms). */
  textCdf: Float64Array;
  contentCdf: Float64Array;
}

function cdf(count: number, firstRank: number, exponent: number): Float64Array {
  const out = new Float64Array(count);
  let total = 0;
  for (let i = 0; i < count; i++) out[i] = total += 1 / (firstRank + i) ** exponent;
  for (let i = 0; i < count; i++) out[i]! /= total;
  return out;
}

/**
 * `contentWords` made-up words of 2–4 syllables (distinct), after the stop words; Zipf exponent `exponent`.
 */
export function vocabulary(seed: number, contentWords: number, exponent = 1): Vocabulary {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const seen = new Set(STOP_WORDS);
  const words = [...STOP_WORDS];
  while (words.length < STOP_WORDS.length + contentWords) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = '';
    for (let s = 0; s < syllables; s++)
      word += pick(ONSETS) + pick(VOWELS) + (s === syllables - 1 ? pick(CODAS) : '');
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  return {
    words,
    stopWords: STOP_WORDS.length,
    textCdf: cdf(words.length, 1, exponent),
    contentCdf: cdf(contentWords, STOP_WORDS.length + 1, exponent),
  };
}

/** Index drawn from a cumulative distribution (binary search). */
function draw(table: Float64Array, random: () => number): number {
  const u = random();
  let lo = 0;
  let hi = table.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (table[mid]! < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export const textWord = (v: Vocabulary, random: () => number): string => v.words[draw(v.textCdf, random)]!;
export const contentWord = (v: Vocabulary, random: () => number): string =>
  v.words[v.stopWords + draw(v.contentCdf, random)]!;

export interface Doc {
  name: string;
  metadata: { project: string; tags: string[] };
  content: string;
}

const capitalized = (w: string) => w[0]!.toUpperCase() + w.slice(1);

/** Document `i` of the corpus `seed`: the same whatever order documents are generated in. */
export function documentAt(v: Vocabulary, seed: number, i: number): Doc {
  const random = prng((seed * 0x9e3779b1 + i) >>> 0);
  const title = Array.from({ length: 3 + Math.floor(random() * 5) }, () => contentWord(v, random));
  const tags = Array.from({ length: 3 }, () => contentWord(v, random));
  const tokens = 80 + Math.floor(random() * 321); // 80–400 words, 240 on average
  const sentences: string[] = [];
  for (let done = 0; done < tokens;) {
    const length = Math.min(tokens - done, 8 + Math.floor(random() * 13));
    const words = Array.from({ length }, () => textWord(v, random));
    sentences.push(`${capitalized(words.join(' '))}.`);
    done += length;
  }
  return {
    name: capitalized(title.join(' ')),
    metadata: { project: contentWord(v, random), tags },
    content: sentences.join(' '),
  };
}

export type QueryKind = 'one-word' | 'two-word' | 'phrase' | 'three-word' | 'either-word';

/**
 * `count` queries of a kind: one content word drawn like query terms are (Zipf); a quoted phrase of two
 * adjacent content words of a random document; two or three content words of one random document (AND);
 * two content words drawn like one-word queries, joined by `or`. Phrases and two- and three-word queries come
 * from real documents, so each has at least one hit.
 */
export function queries(v: Vocabulary, seed: number, docs: number, kind: QueryKind, count: number): string[] {
  const salt = { 'one-word': 1, phrase: 2, 'three-word': 3, 'two-word': 4, 'either-word': 5 }[kind];
  const random = prng(seed ^ salt);
  const stop = new Set(v.words.slice(0, v.stopWords));
  const out: string[] = [];
  while (out.length < count) {
    if (kind === 'one-word') {
      out.push(contentWord(v, random));
      continue;
    }
    if (kind === 'either-word') {
      out.push(`${contentWord(v, random)} or ${contentWord(v, random)}`);
      continue;
    }
    const body = documentAt(v, seed, Math.floor(random() * docs))
      .content.toLowerCase()
      .replaceAll('.', '')
      .split(' ');
    if (kind === 'phrase') {
      const starts = body.flatMap((w, k) =>
        k + 1 < body.length && !stop.has(w) && !stop.has(body[k + 1]!) ? [k] : [],
      );
      if (starts.length === 0) continue;
      const k = starts[Math.floor(random() * starts.length)]!;
      out.push(`"${body[k]} ${body[k + 1]}"`);
    } else {
      const words = kind === 'two-word' ? 2 : 3;
      const content = [...new Set(body.filter((w) => !stop.has(w)))];
      if (content.length < words) continue;
      const picked = new Set<string>();
      while (picked.size < words) picked.add(content[Math.floor(random() * content.length)]!);
      out.push([...picked].join(' '));
    }
  }
  return out;
}
