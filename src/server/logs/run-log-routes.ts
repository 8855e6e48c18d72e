import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import {
  AppendLogBody,
  AppendLogResult,
  LogPage,
  LogQuery,
  MAX_LOG_LINES_PER_CHUNK,
  MAX_LOG_PAGE,
  RunParams,
} from '@assay/contract';
import type { ServiceConfig } from '../config.ts';
import type { Db } from '../db/database.ts';
import { withErrors } from '../http/schemas.ts';
import type { RunControlWaits, WaitSubject } from '../runs/run-control-waits.ts';
import { runKeyOf as keyOf } from '../runs/run-repository.ts';
import { contentDisposition } from '../storage/content-disposition.ts';
import type { LogNotices } from './log-notices.ts';
import { RUN_LOG_CHANNEL } from './run-log-repository.ts';
import * as service from './run-log-service.ts';

const tags = ['runs'];

/** The log follows' waits: woken by notices on RUN_LOG_CHANNEL, capped as the control polls are. */
export const RUN_LOG_WAITS: WaitSubject = {
  channel: RUN_LOG_CHANNEL,
  waiting: {
    name: 'assay_run_log_waiting',
    help: 'Log follows (GET …/logs?wait_s=) waiting on this replica (at most ASSAY_RUN_CONTROL_MAX_WAITING)',
  },
  listenerUp: {
    name: 'assay_run_log_listener_up',
    help: 'Whether this replica listens for stored log chunks (1); while 0 waiting follows re-read their log',
  },
  changes: 'stored log chunks',
};

/** A run's console log: the runner appends chunks, readers page, follow (long-poll) or download it. */
export function runLogRoutes(db: Db, config: ServiceConfig, waits: RunControlWaits, notices: LogNotices) {
  const limits = { graceMs: config.metricsGraceMs, maxBytes: config.runLogMaxBytes };
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    // The scopes of the run's own endpoints: a runner appends with what moves its run (a worker key, its own
    // run only), a reader reads with runs:read.
    const read = { scope: 'runs:read' as const, workerKeys: true };
    const write = { scope: 'runs:write' as const, workerKeys: true };
    const path = '/experiments/:id/variations/:n/runs/:r/logs';

    app.post(
      path,
      {
        config: write,
        schema: {
          tags,
          operationId: 'appendRunLogs',
          summary: `Append up to ${MAX_LOG_LINES_PER_CHUNK} console log lines of a running run`,
          description:
            'Lines `first_seq`, `first_seq + 1`, … of the run’s log (seq counts both streams, from 1). Only the ' +
            'seqs the log does not hold yet are stored, so a chunk may be resent, whole or overlapping. Taken ' +
            'while the run is running and for `ASSAY_METRICS_GRACE_S` after it ended (409 `run_ended` later, ' +
            '`run_not_started` before it started). A line’s text is at most 64 KiB of UTF-8. Past ' +
            '`ASSAY_RUN_LOG_MAX_MB` the log keeps its first and its last half and counts what it dropped ' +
            'between (`dropped`). Answers the highest seq stored.',
          params: RunParams,
          body: AppendLogBody,
          response: withErrors({ 200: AppendLogResult }, 409),
        },
      },
      (req) => service.appendLog(db, req.principal, keyOf(req.params), req.body, limits, notices),
    );
    app.get(
      path,
      {
        config: read,
        schema: {
          tags,
          operationId: 'getRunLogs',
          summary: 'A page of the run’s console log; with wait_s, a follow that waits for new lines',
          description:
            `The lines after seq \`after\`, at most \`limit\` (up to ${MAX_LOG_PAGE}), of one \`stream\` or both. ` +
            'Read on from `next_after`. With `wait_s`, an answer that would bring nothing new waits up to that ' +
            'long, and answers as soon as a line is stored or the run ends. `complete` is true once the run ' +
            'has ended and every stored line was answered; `dropped` is what the size cap removed after seq ' +
            '`dropped.after_seq`.',
          params: RunParams,
          querystring: LogQuery,
          response: withErrors({ 200: LogPage }),
        },
      },
      (req, reply) => {
        // The reader gave up (a follow was closed): its place among the waiting is freed.
        const gone = new AbortController();
        reply.raw.once('close', () => gone.abort());
        return service.readLog(db, waits, req.principal, keyOf(req.params), req.query, gone.signal);
      },
    );
    app.get(
      `${path}.txt`,
      {
        config: read,
        schema: {
          tags,
          operationId: 'downloadRunLogs',
          summary: 'The whole console log as text: one line per log line, `<time> <stream> | <text>`',
          description:
            'Where the size cap dropped lines, a line `[… N lines (S MB) dropped …]` stands in for them.',
          params: RunParams,
          response: withErrors({
            200: {
              description: 'The log as text/plain (an attachment)',
              content: { 'text/plain': { schema: Type.String() } },
            } as never,
          }),
        },
      },
      async (req, reply) => {
        const { text } = await service.downloadLog(db, req.principal, keyOf(req.params));
        const { id, n, r } = req.params;
        return reply
          .header('content-type', 'text/plain; charset=utf-8')
          .header('content-disposition', contentDisposition(`${id}-${n}-${r}.log.txt`))
          .send(Readable.from(text));
      },
    );
  };
}
