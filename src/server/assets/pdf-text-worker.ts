// Runs in a worker thread (see pdf-text.ts): pdf.js parses on this thread's event loop, never the service's.
import { parentPort, workerData } from 'node:worker_threads';
import { extractText, getDocumentProxy } from 'unpdf';

const { bytes, maxChars } = workerData as { bytes: Uint8Array; maxChars: number };
const pdf = await getDocumentProxy(bytes);
const { text } = await extractText(pdf, { mergePages: true });
parentPort!.postMessage(text.slice(0, maxChars));
