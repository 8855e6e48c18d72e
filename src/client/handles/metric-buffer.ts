// The buffer behind `run.logMetrics`: points wait here and travel in batches, one request at a time.
import {
  encodeMetricValue,
  MAX_METRIC_KEY_LENGTH,
  MAX_METRIC_POINTS_PER_REQUEST,
  MAX_METRIC_STEP,
  METRIC_KEY_PATTERN,
} from '@assay/contract/metric-values';
import type { MetricPointInput } from '@assay/contract';
import { APIConnectionError, APIError, MetricsError, ServerError } from '../core/errors.ts';

/** How a run handle batches and retries its metric points; every field has a default. */
export interface MetricsOptions {
  /** Points per request, 1 to MAX_METRIC_POINTS_PER_REQUEST (the default). */
  batchSize?: number;
  /** Seconds a point may wait for a batch to fill before it is sent anyway; default 1. */
  flushInterval?: number;
  /**
   * Seconds one batch keeps being retried while the service is unreachable or answers 5xx, 408 or 429 (with
   * backoff from 0.5 s up to 10 s) before it and the points behind it are dropped; default 300.
   */
  retryFor?: number;
}

const DEFAULT_FLUSH_INTERVAL_S = 1;
const DEFAULT_RETRY_FOR_S = 300;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 10_000;
const KEY = new RegExp(METRIC_KEY_PATTERN);
/** Answers that say "not now" rather than "never": a request timeout and rate limiting. */
const TRANSIENT_STATUSES = new Set([408, 429]);

/** A point's own time: a Date, an ISO 8601 string, or milliseconds since the epoch. */
export type MetricTime = Date | string | number;

/** Throws a RangeError naming what is wrong with a key, so a bad name fails where it is written. */
export function checkMetricKey(key: string): void {
  if (key.length > MAX_METRIC_KEY_LENGTH)
    throw new RangeError(
      `metric key is longer than ${MAX_METRIC_KEY_LENGTH} characters: ${key.slice(0, 40)}…`,
    );
  if (!KEY.test(key))
    throw new RangeError(
      `invalid metric key ${JSON.stringify(key)}: use letters, digits, "_ - . / :" and inner spaces`,
    );
}

export function checkMetricStep(step: number): void {
  if (!Number.isInteger(step) || step < 0 || step > MAX_METRIC_STEP)
    throw new RangeError(`invalid metric step ${step}: a whole number from 0 to ${MAX_METRIC_STEP}`);
}

function isoTime(time: MetricTime): string {
  const date = time instanceof Date ? time : new Date(time);
  if (Number.isNaN(date.getTime())) throw new RangeError(`invalid metric timestamp: ${String(time)}`);
  return date.toISOString();
}

/**
 * Points wait until a batch is full or `flushInterval` has passed since the oldest, then go in one request;
 * while a request is in flight the next points wait for it, so requests never overlap. A batch that meets a
 * connection error, a 5xx, a 408 or a 429 is sent again after a backoff (the service keeps one point per key and step, so a
 * repeat makes no duplicates); any other answer drops it. A dropped batch becomes a MetricsError that the
 * next call throws.
 */
export class MetricBuffer {
  readonly #send: (points: MetricPointInput[]) => Promise<unknown>;
  readonly #batchSize: number;
  readonly #intervalMs: number;
  readonly #retryForMs: number;
  #pending: MetricPointInput[] = [];
  #pumping: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #draining = false;
  #error: MetricsError | undefined;

  constructor(send: (points: MetricPointInput[]) => Promise<unknown>, options: MetricsOptions = {}) {
    const batchSize = options.batchSize ?? MAX_METRIC_POINTS_PER_REQUEST;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_METRIC_POINTS_PER_REQUEST)
      throw new RangeError(
        `metrics batchSize must be a whole number from 1 to ${MAX_METRIC_POINTS_PER_REQUEST}`,
      );
    const interval = options.flushInterval ?? DEFAULT_FLUSH_INTERVAL_S;
    const retryFor = options.retryFor ?? DEFAULT_RETRY_FOR_S;
    if (!(interval > 0) || !(retryFor >= 0))
      throw new RangeError('metrics flushInterval must be above 0 and retryFor at least 0 (seconds)');
    this.#send = send;
    this.#batchSize = batchSize;
    this.#intervalMs = interval * 1000;
    this.#retryForMs = retryFor * 1000;
  }

  /** Points not yet stored, in flight included. */
  get pending(): number {
    return this.#pending.length;
  }

  /** Queues points already checked; throws the error of a batch dropped since the last call. */
  add(points: MetricPointInput[]): void {
    this.#throwDropped();
    this.#pending.push(...points);
    if (this.#pumping) return;
    if (this.#pending.length >= this.#batchSize) this.#pump();
    else this.#timer ??= setTimeout(() => this.#pump(true), this.#intervalMs);
  }

  /** Sends every queued point and resolves when all are stored; throws a MetricsError if any were dropped. */
  async flush(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#pumping || this.#pending.length > 0) {
        if (!this.#pumping) this.#pump(true);
        await this.#pumping;
      }
    } finally {
      this.#draining = false;
    }
    this.#throwDropped();
  }

  /** Checks and encodes one call's values; the caller passes them to add(). */
  static points(
    values: Record<string, number>,
    step: number,
    timestamp: MetricTime | undefined,
  ): MetricPointInput[] {
    checkMetricStep(step);
    const time = isoTime(timestamp ?? Date.now());
    return Object.entries(values).map(([key, value]) => {
      checkMetricKey(key);
      if (typeof value !== 'number')
        throw new TypeError(`metric ${JSON.stringify(key)} must be a number, not ${typeof value}`);
      return { key, step, value: encodeMetricValue(value), timestamp: time };
    });
  }

  #throwDropped(): void {
    const error = this.#error;
    this.#error = undefined;
    if (error) throw error;
  }

  /** Sends batches one after the other: full ones only, or every point when `all` (a timer, a flush). */
  #pump(all = false): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pumping = (async () => {
      while (
        this.#pending.length >= this.#batchSize ||
        ((all || this.#draining) && this.#pending.length > 0)
      ) {
        const batch = this.#pending.slice(0, this.#batchSize);
        try {
          await this.#deliver(batch);
          this.#pending.splice(0, batch.length);
        } catch (error) {
          // Later points would meet the same answer (the run ended, the key is refused) or the same outage.
          const dropped = this.#pending.length + (this.#error?.dropped ?? 0);
          this.#pending = [];
          this.#error = new MetricsError(dropped, error);
        }
      }
    })().finally(() => {
      this.#pumping = undefined;
      if (this.#draining) return; // flush() goes on itself
      if (this.#pending.length >= this.#batchSize) this.#pump();
      else if (this.#pending.length > 0) this.#timer ??= setTimeout(() => this.#pump(true), this.#intervalMs);
    });
  }

  async #deliver(batch: MetricPointInput[]): Promise<void> {
    const deadline = Date.now() + this.#retryForMs;
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      try {
        await this.#send(batch);
        return;
      } catch (error) {
        const transient =
          error instanceof APIConnectionError ||
          error instanceof ServerError ||
          (error instanceof APIError && TRANSIENT_STATUSES.has(error.statusCode));
        if (!transient || Date.now() + delay > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
