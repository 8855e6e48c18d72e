import { Worker } from 'node:worker_threads';

// Plain JavaScript, run by `eval` in the thread: no file to find next to this one, whether the client runs
// from its TypeScript sources or from the built package.
const SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { open } = require('node:fs/promises');
// One buffer, reused: a file is read at memory speed, and fresh chunks would pile up faster than they
// are collected.
const buffer = Buffer.allocUnsafe(1024 * 1024);
async function hash({ id, path, partSize }) {
  const file = await open(path, 'r');
  try {
    const whole = createHash('sha256');
    let part = createHash('sha256');
    let inPart = 0;
    let n = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      whole.update(chunk);
      if (partSize === null) continue;
      for (let at = 0; at < chunk.length; ) {
        const take = Math.min(chunk.length - at, partSize - inPart);
        part.update(chunk.subarray(at, at + take));
        at += take;
        inPart += take;
        if (inPart === partSize) {
          parentPort.postMessage({ id, part: ++n, sha256: part.digest('hex') });
          part = createHash('sha256');
          inPart = 0;
        }
      }
    }
    if (partSize !== null && inPart > 0) parentPort.postMessage({ id, part: ++n, sha256: part.digest('hex') });
    parentPort.postMessage({ id, sha256: whole.digest('hex') });
  } finally {
    await file.close();
  }
}
// One file at a time (they share the buffer), in the order asked.
let queue = Promise.resolve();
parentPort.on('message', (job) => {
  queue = queue.then(() =>
    hash(job).catch((error) =>
      parentPort.postMessage({ id: job.id, error: String((error && error.message) || error) }),
    ),
  );
});
`;

interface Job {
  parts: string[];
  onPart: ((partNumber: number, sha256: string) => void) | undefined;
  resolve(v: { sha256: string; partSha256: string[] }): void;
  reject(e: unknown): void;
}

type Message = { id: number } & ({ part: number; sha256: string } | { sha256: string } | { error: string });

let thread: Worker | undefined;
let nextId = 0;
const jobs = new Map<number, Job>();

/**
 * The one hashing thread of the process, started at the first file to hash; it never keeps the process
 * alive idle.
 */
function hashingThread(): Worker {
  if (thread) return thread;
  const worker = new Worker(SOURCE, { eval: true });
  worker.on('message', (m: Message) => {
    const job = jobs.get(m.id);
    if (!job) return;
    if ('error' in m) {
      finish(m.id);
      job.reject(new Error(m.error));
    } else if ('part' in m) {
      job.parts.push(m.sha256);
      job.onPart?.(m.part, m.sha256);
    } else {
      finish(m.id);
      job.resolve({ sha256: m.sha256, partSha256: job.parts });
    }
  });
  const fail = (error: unknown) => {
    if (thread === worker) thread = undefined;
    for (const [id, job] of jobs) {
      jobs.delete(id);
      job.reject(error);
    }
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the hashing thread exited (${code})`)));
  worker.unref();
  thread = worker;
  return worker;
}

function finish(id: number): void {
  jobs.delete(id);
  if (jobs.size === 0) thread?.unref();
}

/**
 * SHA-256 (hex) of a file and of each part of `partSize` bytes, in one read, on a thread of its own: the
 * event loop keeps feeding the PUTs in flight while the next file is hashed. `onPart` hears each part's
 * digest as soon as it is read.
 */
export function hashInThread(
  path: string,
  partSize: number | null,
  onPart?: (partNumber: number, sha256: string) => void,
): Promise<{ sha256: string; partSha256: string[] }> {
  const worker = hashingThread();
  const id = nextId++;
  const { promise, resolve, reject } = Promise.withResolvers<{ sha256: string; partSha256: string[] }>();
  jobs.set(id, { parts: [], onPart, resolve, reject });
  worker.ref();
  worker.postMessage({ id, path, partSize });
  return promise;
}
