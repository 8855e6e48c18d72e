// The tables of the upload benchmark: medians over rounds per scenario, then every round as measured.
import type { BenchFile } from './curl-upload.ts';
import { mbps, median, mib, table } from './report.ts';
import type { UploadReport } from './upload-child.ts';

export interface UploadResult {
  round: number;
  scenario: { label: string; files: BenchFile[] };
  client: UploadReport & { sampledPeakRss: number };
  curl: { puts: number; putS: number; finalizeS: number };
}

const bytesOf = (r: UploadResult) => r.scenario.files.reduce((sum, f) => sum + f.size, 0);
const transferS = (r: UploadResult) => r.client.finalizeS - r.client.createdS;

/** Median-over-rounds summary: MB/s of both, the ratios client/curl, and the client's highest peak RSS. */
export function summaryTable(results: readonly UploadResult[]): string {
  const labels = [...new Set(results.map((r) => r.scenario.label))];
  return table(
    [
      'Files',
      'Client transfer MB/s',
      'curl PUTs MB/s',
      'Ratio',
      'Client end to end MB/s',
      'curl PUTs + finalize MB/s',
      'Ratio',
      'Client peak RSS',
    ],
    labels.map((label) => {
      const runs = results.filter((r) => r.scenario.label === label);
      const middle = (f: (r: UploadResult) => number) => median(runs.map(f));
      const clientTransfer = middle((r) => bytesOf(r) / transferS(r) / 1e6);
      const curlPut = middle((r) => bytesOf(r) / r.curl.putS / 1e6);
      const clientEnd = middle((r) => bytesOf(r) / r.client.readyS / 1e6);
      const curlEnd = middle((r) => bytesOf(r) / (r.curl.putS + r.curl.finalizeS) / 1e6);
      const peak = Math.max(...runs.map((r) => r.client.peakRss));
      const growth = Math.max(...runs.map((r) => r.client.peakRss - r.client.baselineRss));
      return [
        label,
        clientTransfer.toFixed(1),
        curlPut.toFixed(1),
        `**${(clientTransfer / curlPut).toFixed(2)}**`,
        clientEnd.toFixed(1),
        curlEnd.toFixed(1),
        (clientEnd / curlEnd).toFixed(2),
        `${mib(peak)} (+${mib(growth)})`,
      ];
    }),
  );
}

/** Every round: the client's phases, curl's PUTs and finalize, and the client's memory. */
export function roundsTable(results: readonly UploadResult[]): string {
  return table(
    [
      'Round',
      'Files',
      'Client: ready after = create + hash & transfer + finalize',
      'Client MB/s transfer / end to end',
      'curl',
      'curl MB/s PUTs / + finalize',
      'Client RSS baseline → peak (VmHWM; sampled)',
    ],
    results.map((r) => {
      const total = bytesOf(r);
      const c = r.client;
      return [
        String(r.round),
        r.scenario.label,
        `${c.readyS.toFixed(1)} s = ${c.createdS.toFixed(1)} + ${transferS(r).toFixed(1)} + ${(c.readyS - c.finalizeS).toFixed(1)}`,
        `${mbps(total, transferS(r))} / ${mbps(total, c.readyS)}`,
        `${r.curl.puts} PUTs ${r.curl.putS.toFixed(1)} s; finalize ${r.curl.finalizeS.toFixed(1)} s`,
        `${mbps(total, r.curl.putS)} / ${mbps(total, r.curl.putS + r.curl.finalizeS)}`,
        `${mib(c.baselineRss)} → ${mib(c.peakRss)}; ${mib(c.sampledPeakRss)}`,
      ];
    }),
  );
}
