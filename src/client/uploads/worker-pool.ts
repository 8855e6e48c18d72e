/** At most `size` tasks at a time, started in the order they were submitted (max_upload_workers). */
export class WorkerPool {
  readonly size: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`a worker pool needs at least 1 worker, got ${size}`);
    this.size = size;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active < this.size) this.#active++;
    // the finishing task hands its slot over
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
