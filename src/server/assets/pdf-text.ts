import { Worker } from 'node:worker_threads';

/** Limits of one extraction; past either the worker is ended and the PDF yields no text. */
export interface PdfTextLimits {
  timeoutMs: number;
  /** V8 old-generation heap of the worker; pdf.js needs a few times the file's size for a large document. */
  maxHeapMb: number;
}

// The source tree runs the TypeScript file; the built package its compiled JavaScript beside this module.
const WORKER = new URL(
  import.meta.url.endsWith('.ts') ? './pdf-text-worker.ts' : './pdf-text-worker.js',
  import.meta.url,
);

export class PdfTextError extends Error {
  override name = 'PdfTextError';
}

/**
 * The text of a PDF, parsed in a worker thread of its own: a 100 MB document keeps pdf.js busy for seconds,
 * which on the service's thread would stall every request (heartbeats among them). One thread per job rather
 * than a pool: finalizing a PDF is rare, a job that times out must have its thread ended anyway, and an idle
 * pool would hold pdf.js's memory for nothing. Rejects with PdfTextError on timeout, memory limit or bad PDF.
 */
export function pdfTextInWorker(bytes: Uint8Array, maxChars: number, limits: PdfTextLimits): Promise<string> {
  // A private copy whose buffer moves to the worker instead of being cloned.
  const owned = new Uint8Array(bytes);
  const worker = new Worker(WORKER, {
    workerData: { bytes: owned, maxChars },
    transferList: [owned.buffer],
    resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
    stdout: true,
    stderr: true,
  });
  return new Promise<string>((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer);
      void worker.terminate();
      reject(new PdfTextError(message));
    };
    const timer = setTimeout(
      () => fail(`PDF text extraction took over ${limits.timeoutMs} ms`),
      limits.timeoutMs,
    );
    worker.once('message', (text: string) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(text);
    });
    worker.once('error', (error) => fail(`PDF text extraction failed: ${error.message}`));
    worker.once('exit', (code) => fail(`PDF text extraction ended without a result (exit code ${code})`));
  });
}
