import { SEARCHABLE_ASSET_KINDS } from '@assay/contract';
import type { Readable } from 'node:stream';
import { pdfTextInWorker, type PdfTextLimits } from './pdf-text.ts';

/**
 * tsvector refuses documents over 1 MB; the head of a long paper carries its abstract and
 * introduction anyway.
 */
export const MAX_INDEXED_CHARS = 400_000;
const MAX_PDF_BYTES = 100 * 1024 * 1024;
const MAX_TEXT_BYTES = 2 * 1024 * 1024;

async function readCapped(stream: NodeJS.ReadableStream, cap: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as Readable) {
    total += (chunk as Buffer).length;
    if (total > cap) {
      (stream as Readable).destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Text of one component for the search index: PDF through `unpdf` (Mozilla's pdf.js built for servers), plain
 * text and JSON as they are. Undefined for other types and oversized files; rejects with PdfTextError for an
 * unreadable PDF or one over the limits. Search then still finds the asset by its name and metadata.
 */
export async function extractText(
  contentType: string,
  size: number,
  open: () => Promise<NodeJS.ReadableStream>,
  pdfLimits: PdfTextLimits,
): Promise<string | undefined> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf') {
    if (size > MAX_PDF_BYTES) return undefined;
    const bytes = await readCapped(await open(), MAX_PDF_BYTES);
    if (!bytes) return undefined;
    return pdfTextInWorker(bytes, MAX_INDEXED_CHARS, pdfLimits);
  }
  if (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/x-yaml'
  ) {
    const bytes = await readCapped(await open(), MAX_TEXT_BYTES);
    return bytes?.toString('utf8').replaceAll('\u0000', '').slice(0, MAX_INDEXED_CHARS);
  }
  return undefined;
}

/** Kinds whose text is indexed: research documents and papers. */
export const SEARCHABLE_KINDS: readonly string[] = SEARCHABLE_ASSET_KINDS;
