// `assay runs logs`: a run's console log, as its program printed it (stderr lines on stderr), read page by
// page or followed until the run has ended and every line was printed.
import { once } from 'node:events';
import { MAX_LOG_PAGE, type LogPage, type LogStream } from '@assay/contract';
import { openClient } from './cli-client.ts';

export interface RunsLogsOptions {
  follow?: boolean;
  stream?: LogStream;
  after?: number;
}

/** How long each follow read waits for new lines; the service answers at once when one is stored. */
const FOLLOW_WAIT_S = 25;

export async function runsLogs(
  experimentId: string,
  n: number,
  r: number,
  options: RunsLogsOptions,
): Promise<number> {
  const { client } = openClient();
  let after = options.after ?? 0;
  let marked = false;
  for (;;) {
    const page: LogPage = await client.runs.logs(experimentId, n, r, {
      after,
      limit: MAX_LOG_PAGE,
      ...(options.stream ? { stream: options.stream } : {}),
      waitS: options.follow ? FOLLOW_WAIT_S : 0,
    });
    const gapAfter = page.dropped.lines > 0 ? page.dropped.after_seq : undefined;
    let out = '';
    let err = '';
    for (const line of page.lines) {
      // The cap's gap: said once, where the seqs jump over it.
      if (!marked && gapAfter !== undefined && line.seq > gapAfter && after <= gapAfter) {
        out += `[… ${page.dropped.lines} lines dropped …]\n`;
        marked = true;
      }
      if (line.stream === 'stderr') err += `${line.text}\n`;
      else out += `${line.text}\n`;
      after = line.seq;
    }
    await write(process.stdout, out);
    await write(process.stderr, err);
    const moved = page.next_after > after || page.lines.length > 0;
    after = Math.max(after, page.next_after);
    if (page.complete || (!options.follow && !moved)) return 0;
  }
}

/** Writes and waits while the reader is behind (a pager, a slow pipe), so a long log is not held in memory. */
async function write(stream: NodeJS.WriteStream, text: string): Promise<void> {
  if (text && !stream.write(text)) await once(stream, 'drain');
}
