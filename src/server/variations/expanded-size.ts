import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import { AppError, badRequest } from '../http/errors.ts';

const utf8 = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? 'null');

/**
 * The size in bytes of the document's JSON once every alias is replaced by what it points at, measured on the
 * syntax tree without expanding anything: each node is measured once, so an alias costs a lookup. YAML's
 * aliases let 100 KB of text stand for 10 MB of config.
 */
export function expandedJsonBytes(doc: Document): number {
  const sizes = new Map<unknown, number>();
  const measuring = new Set<unknown>();
  const size = (node: unknown): number => {
    if (node === null || node === undefined) return 4;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (measuring.has(node))
      throw badRequest('invalid_yaml', 'an alias refers to a collection that contains it');
    measuring.add(node);
    let bytes: number;
    if (isAlias(node)) bytes = size(node.resolve(doc));
    else if (isScalar(node)) bytes = utf8(node.value);
    else if (isMap(node))
      bytes = collection(node.items.map((pair) => keySize(pair.key) + 1 + size(pair.value)));
    else if (isSeq(node))
      bytes = collection(node.items.map((item) => size(isPair(item) ? item.value : item)));
    else bytes = 4;
    measuring.delete(node);
    sizes.set(node, bytes);
    return bytes;
  };
  // A key becomes a string: a scalar's own text, anything else its JSON between quotes.
  const keySize = (key: unknown) => (isScalar(key) ? utf8(String(key.value)) : size(key) + 2);
  return size(doc.contents as Node | null);
}

const collection = (items: number[]) => 2 + Math.max(items.length - 1, 0) + items.reduce((a, b) => a + b, 0);

const figure = (n: number) => n.toLocaleString('en-US');

/** Refuses a config whose expanded JSON would pass `limit` bytes: 413 with both figures, nothing stored. */
export function assertExpandedSize(doc: Document, limit: number, field: string): void {
  const bytes = expandedJsonBytes(doc);
  if (bytes <= limit) return;
  throw new AppError(
    413,
    'config_too_large',
    `${field} expands to ${figure(bytes)} bytes of JSON (YAML aliases repeat what they point at); the limit is ${figure(limit)} bytes (ASSAY_BODY_LIMIT_BYTES)`,
    { bytes, limit },
  );
}
