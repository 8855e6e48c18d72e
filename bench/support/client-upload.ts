// Runs upload-child.ts and samples its VmRSS from here while it uploads.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { procMemory } from './report.ts';
import type { UploadReport } from './upload-child.ts';

/**
 * One client upload of `files` in a child process (HOME and the upload store in `home`); its report and
 * sampled peak RSS.
 */
export async function clientUpload(o: {
  serverUrl: string;
  apiKey: string;
  home: string;
  files: string[];
}): Promise<UploadReport & { sampledPeakRss: number }> {
  const input = JSON.stringify({
    serverUrl: o.serverUrl,
    apiKey: o.apiKey,
    storePath: path.join(o.home, 'uploads.db'),
    files: o.files,
  });
  // No SERVICE_* variables: the client runs on its defaults (among them max_upload_workers).
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'upload-child.ts'), input], {
    env: { PATH: process.env.PATH, HOME: o.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let sampledPeakRss = 0;
  const sampler = setInterval(
    () => (sampledPeakRss = Math.max(sampledPeakRss, procMemory(child.pid!, 'VmRSS') ?? 0)),
    20,
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`the client upload exited ${code}: ${stderr.trim() || stdout.trim()}`);
  } finally {
    clearInterval(sampler);
  }
  const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as UploadReport;
  if (report.state !== 'ready') throw new Error(`the client's asset ended ${report.state}`);
  return { ...report, sampledPeakRss };
}
